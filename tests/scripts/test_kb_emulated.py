"""Runs made in an emulated guest (scripts/vm-run without KVM: meta.json
virt "emulated") are never set beside others without saying that their
timings are not comparable with native ones (issue 16)."""
from kbench.cli import compare_main, report_main, summarize_main

from kb_helpers import grouping_warnings, set_meta


def _run(gen, root, kernel, run_id, seed, virt=None):
    d = gen.make_run(root, "h", kernel, seed=seed, reps=3, samples=2, cases="small", run_id=run_id,
                     failures=False)
    set_meta(d, virt=virt)
    return d


def _warnings(root):
    return grouping_warnings(root, "EMULATED")


def test_emulated_kernel_named_in_every_script(tmp_path, gen, capsys):
    _run(gen, tmp_path, "6.1.0", "r1", 1)
    _run(gen, tmp_path, "6.12.0", "r2", 2, virt="emulated")
    (w,) = _warnings(tmp_path)
    assert w.startswith("WARNING: EMULATED: h/6.12.0 ran in a QEMU guest without KVM")
    assert "not comparable with native ones" in w
    assert summarize_main([str(tmp_path)]) == 0
    assert "WARNING: EMULATED: h/6.12.0" in capsys.readouterr().err
    assert compare_main([str(tmp_path / "h" / "6.1.0"), str(tmp_path / "h" / "6.12.0")]) == 0
    cap = capsys.readouterr()
    assert "WARNING: EMULATED: h/6.12.0" in cap.err
    assert "  virt: -  ->  emulated  (emulated timings are not comparable with native ones)" in cap.out
    page = tmp_path / "p.html"
    assert report_main([str(tmp_path), "--out", str(page), "--no-samples", "--boot", "100"]) == 0
    assert "<div class='alarm'>EMULATED: h/6.12.0 ran in a QEMU guest without KVM" in page.read_text()


def test_one_run_of_a_kernel_emulated(tmp_path, gen):
    _run(gen, tmp_path, "6.1.0", "r1", 1, virt="emulated")
    _run(gen, tmp_path, "6.1.0", "r2", 2, virt="kvm")
    (w,) = _warnings(tmp_path)
    assert "h/6.1.0 (1 of its 2 runs)" in w


def test_native_and_kvm_runs_no_warning(tmp_path, gen):
    _run(gen, tmp_path, "6.1.0", "r1", 1)
    _run(gen, tmp_path, "6.2.0", "r2", 2, virt="kvm")
    assert _warnings(tmp_path) == []
