"""The scripts' guard (kbench.cli._guard) and entry points: every kind of
failure ends with its own message and exit status; an unexpected exception
with one 'internal error' line (exit 1; the traceback only with
KBENCH_DEBUG=1); a Python without numpy or matplotlib with the command
that installs them. Never a traceback."""
import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb_helpers import assert_clean_exit
from kbench import cli
from kbench.model import load, summary
from kbench.views import summary_text

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
INSTALL = "apt-get install python3-numpy python3-matplotlib (make test installs them)"
INTERNAL = "prog: internal error: ValueError: boom (set KBENCH_DEBUG=1 for details; please report it)\n"


def raising(exc):
    def fn(argv):
        raise exc
    return fn


@pytest.mark.parametrize("exc,code,err", [
    (cli.UsageError("--x: bad"), 2, "prog: --x: bad\n"),
    (cli.Failure("no usable run found in d"), 1, "prog: no usable run found in d\n"),
    (load.InputError("d/meta.json: empty file"), 1, "prog: d/meta.json: empty file\n"),
    (OSError(errno.ENOENT, "No such file or directory", "/x/y"), 1, "prog: /x/y: No such file or directory\n"),
    (KeyboardInterrupt(), 130, "prog: interrupted\n"),
    (ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib"), 1,
     f"prog: needs matplotlib, which {sys.executable} cannot import (No module named 'matplotlib'): {INSTALL}\n"),
], ids=["usage", "failure", "input", "oserror", "interrupt", "no-matplotlib"])
def test_guard_gives_each_failure_its_message_and_status(capsys, monkeypatch, exc, code, err):
    monkeypatch.delenv("KBENCH_DEBUG", raising=False)
    rc = cli._guard("prog", raising(exc), [])
    got = capsys.readouterr()
    assert (rc, got.err, got.out) == (code, err, "")
    assert_clean_exit(rc, got.err, code)


def test_guard_broken_pipe_is_quiet_success(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", sys.stdout)  # _guard points stdout at /dev/null: restored after
    rc = cli._guard("prog", raising(BrokenPipeError(errno.EPIPE, "Broken pipe")), [])
    assert (rc, capsys.readouterr().err) == (0, "")


@pytest.mark.parametrize("exc", [ValueError("boom"), ModuleNotFoundError("No module named 'yaml'", name="yaml")],
                         ids=["bug", "other-module"])
def test_guard_unexpected_exception_is_one_internal_error_line(capsys, monkeypatch, exc):
    """The last resort: exit 1, one line naming the exception, no
    traceback. A module the scripts do not depend on is not 'missing
    numpy': it is a bug."""
    monkeypatch.delenv("KBENCH_DEBUG", raising=False)
    rc = cli._guard("prog", raising(exc), [])
    err = capsys.readouterr().err
    assert rc == 1
    assert err == f"prog: internal error: {type(exc).__name__}: {exc} (set KBENCH_DEBUG=1 for details; please report it)\n"


def test_guard_internal_error_with_debug_shows_the_traceback(capsys, monkeypatch):
    monkeypatch.setenv("KBENCH_DEBUG", "1")
    rc = cli._guard("prog", raising(ValueError("boom")), [])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("Traceback (most recent call last):") and err.endswith(INTERNAL)


def test_a_bug_in_a_command_is_an_internal_error(fixture_runs, capsys, monkeypatch):
    """The guard is around the real command: a failure inside summarize
    (here a planted one) is reported as internal, not as bad input."""
    monkeypatch.delenv("KBENCH_DEBUG", raising=False)

    def broken(*a, **kw):
        raise ValueError("boom")
    monkeypatch.setattr(summary_text, "format_group", broken)
    rc = cli.summarize_main([str(fixture_runs[0])])
    out, err = capsys.readouterr()
    assert rc == 1 and out == "" and err == INTERNAL.replace("prog:", "summarize:")


def test_an_unwritable_output_is_a_clean_failure(fixture_runs, tmp_path, capsys):
    """An OSError of the command itself (the CSV cannot be created: its
    directory is a file) names the path and the reason, exit 1."""
    (tmp_path / "file").write_text("")
    target = tmp_path / "file" / "s.csv"
    rc = cli.summarize_main([str(fixture_runs[0]), "--csv", str(target)])
    assert_clean_exit(rc, capsys.readouterr().err, 1, f"summarize: {target}: Not a directory")
    assert not target.exists()


# ---- a Python without numpy or matplotlib ---------------------------------------

def hidden(tmp_path, module):
    """An environment whose Python cannot import `module` (a package of that
    name first on PYTHONPATH raising what a missing module raises)."""
    d = tmp_path / f"no-{module}"
    (d / module).mkdir(parents=True)
    (d / module / "__init__.py").write_text(
        f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    env = dict(os.environ, PYTHONPATH=str(d))
    probe = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env,
                           timeout=60)
    assert probe.returncode == 1 and "ModuleNotFoundError" in probe.stderr, probe.stderr
    return env


@pytest.mark.parametrize("name", ["summarize", "compare", "plot", "report"])
def test_scripts_without_numpy_say_what_to_install(tmp_path, fixture_runs, name):
    """scripts/NAME imports kbench.cli, and with it numpy, before the guard
    runs: the entry point itself must turn that into the one line."""
    env = hidden(tmp_path, "numpy")
    args = [str(fixture_runs[0])] + ([str(fixture_runs[1])] if name == "compare" else [])
    if name in ("plot", "report"):
        args += ["--out", str(tmp_path / "out")]
    p = subprocess.run([sys.executable, str(SCRIPTS / name)] + args, capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.stderr == (f"{name}: needs numpy, which {sys.executable} cannot import (No module named 'numpy'): "
                        f"{INSTALL}\n")
    assert_clean_exit(p.returncode, p.stderr, 1)
    assert p.stdout == ""


@pytest.mark.parametrize("name", ["plot", "report"])
def test_charts_without_matplotlib_say_what_to_install(tmp_path, fixture_runs, name):
    env = hidden(tmp_path, "matplotlib")
    out = tmp_path / "out"
    args = [str(fixture_runs[0].parent), "--no-samples", "--boot", "100", "--out", str(out / "index.html")]
    if name == "report":
        args += ["--plots", str(out / "plots")]
    p = subprocess.run([sys.executable, str(SCRIPTS / name)] + args, capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.stderr.splitlines()[-1] == (f"{name}: needs matplotlib, which {sys.executable} cannot import "
                                         f"(No module named 'matplotlib'): {INSTALL}")
    assert_clean_exit(p.returncode, p.stderr, 1)
    assert not (out / "index.html").exists()
