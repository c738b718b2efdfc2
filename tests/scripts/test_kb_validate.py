"""make validate in make test: the documentation's figures that the
repository's data can show (tests/validation/recorded_figures.py --check)
hold, and the check fails loudly when one does not."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "validation" / "recorded_figures.py"


def test_the_quoted_figures_hold_on_the_recorded_data():
    p = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "25 of 25 figures within their bounds; the validation scripts that can run here: ran" in p.stdout


def test_a_figure_outside_its_bounds_fails(monkeypatch, capsys):
    sys.path.insert(0, str(SCRIPT.parent))
    import recorded_figures as rf
    name, file, words, lo, hi = rf.CLAIMS[0]
    monkeypatch.setattr(rf, "CLAIMS", [(name, file, words, lo + 50, hi + 50),
                                       ("prior: cases", file, "a sentence no file has", 321, 321)])
    monkeypatch.setattr(rf, "scripts_still_run", lambda run_dir: [])
    assert rf.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert f"FAILED: {name} is " in err and "outside" in err
    assert f'FAILED: {file} no longer says "a sentence no file has"' in err
