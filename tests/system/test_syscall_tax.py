"""tests/validation/syscall_tax.c, the injected system-call slowdown the
validation measures kbench's sensitivity with: its options, its exit codes
and the filters it installs.  What a filter costs is measured by
tests/validation/syscall_tax.sh calibrate and calibrate-cost, not here."""
import os
import subprocess

import pytest


@pytest.fixture(scope="module")
def tax(root, tmp_path_factory):
    exe = tmp_path_factory.mktemp("tax") / "syscall_tax"
    r = subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                        str(root / "tests" / "validation" / "syscall_tax.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return str(exe)


def _run(tax, *args):
    return subprocess.run([tax, *args], capture_output=True, text=True, timeout=30)


def _filters(tax, *args):
    """The number of seccomp filters the command runs under, and its status."""
    r = _run(tax, *args, "--", "sh", "-c", "grep Seccomp_filters /proc/self/status; exit 3")
    assert r.returncode == 3, r.stderr
    return int(r.stdout.split()[1])


@pytest.mark.parametrize("args, words", [
    ([], "usage"),
    (["--cost"], "--cost needs NR=N"),
    (["--cost", "getppid=5"], "expected '--' after the costs"),
    (["--cost", "getppid=5", "--"], "no command given"),
    (["--cost", "nosuchcall=3", "--", "true"], "system-call number or name"),
    (["--cost", "getppid", "--", "true"], "wants NR=N"),
    (["--cost", "getppid=x", "--", "true"], "non-negative decimal integer"),
    (["--cost", "getppid=1,getppid=2", "--", "true"], "twice"),
    (["--cost", "getppid=1", "--cost", "getppid=2", "--", "true"], "twice"),
    (["--cost", ",", "--", "true"], "names no system call"),
    (["--cost", "getppid=4000,read=100", "--", "true"], "do not fit one filter"),
    (["--cost", ",".join(f"{n}=1" for n in range(17)), "--", "true"], "at most 16"),
    (["--only", "getppid", "5000", "--", "true"], "at most 4092"),
    (["5", "true"], "expected '--' after N"),
])
def test_bad_arguments_exit_2_with_a_message(tax, args, words):
    r = _run(tax, *args)
    assert r.returncode == 2 and words in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_help_goes_to_stdout_and_names_the_cost_option(tax):
    r = _run(tax, "--help")
    assert r.returncode == 0 and "--cost NR=N" in r.stdout and r.stderr == ""


def test_filters_installed_by_each_form(tax):
    """N = 0 runs the command unchanged; a uniform N is split over filters
    of at most 4094 instructions; --only and --cost install one filter,
    however many calls they name; the command's status passes through."""
    assert _filters(tax, "0") == 0
    assert _filters(tax, "100") == 1
    assert _filters(tax, "5000") == 2
    assert _filters(tax, "--only", "getppid", "100") == 1
    assert _filters(tax, "--cost", "getppid=0") == 1
    assert _filters(tax, "--cost", "getppid=1,read=40,write=20", "--cost", "newfstatat=200,openat=270,close=160,"
                    "rt_sigaction=50") == 1


def test_a_cost_filter_allows_every_call(tax, tmp_path):
    """Every branch of the filter answers 'allow': a command making the
    costed calls (and others) under the full spec does its work, the
    largest costs that fit included."""
    out = tmp_path / "copy"
    script = f"cat /etc/hostname > {out} && ls / > /dev/null && stat {out} > /dev/null && echo done"
    for spec in ("getppid=1,read=40,write=20,newfstatat=200,openat=270,close=160,rt_sigaction=50",
                 "read=2040,write=2038", "openat=0,close=0"):
        r = _run(tax, "--cost", spec, "--", "sh", "-c", script)
        assert r.returncode == 0 and r.stdout == "done\n", (spec, r.stderr)
        assert out.read_text() == open("/etc/hostname").read()


def _calibrate(root, bin_dir, *args, **env):
    e = dict(os.environ, BIN=str(bin_dir), ROUNDS="2", SAMPLES="1", **env)
    return subprocess.run(["sh", str(root / "tests" / "validation" / "syscall_tax.sh"), *args],
                          capture_output=True, text=True, timeout=300, env=e)


def test_calibrations_pair_rounds_and_summarise_each(root, bin_dir):
    """calibrate and calibrate-cost (with a baseline spec of its own): one
    line per round, then one summary row per N or per case, a median of
    the rounds' pairs (the shared awk median); the figures are not judged."""
    r = _calibrate(root, bin_dir, "calibrate", "1", CASE="lat_syscall null")
    assert r.returncode == 0, r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines() if ln.startswith("round")] == ["round 1", "round 2"]
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.split()[:1] == ["1"]]
    assert len(rows) == 1 and rows[0][4].endswith("%"), r.stdout
    r = _calibrate(root, bin_dir, "calibrate-cost", "getppid=5", "getppid=1", COST_CASES="lat_syscall null\nlat_sig install")
    assert r.returncode == 0, r.stderr
    assert "--cost getppid=5 against --cost getppid=1" in r.stdout
    assert r.stdout.count(" done") == 2
    rows = {" ".join(ln.split()[:2]): ln.split() for ln in r.stdout.splitlines()
            if ln.startswith(("lat_syscall null", "lat_sig install"))}
    assert set(rows) == {"lat_syscall null", "lat_sig install"}
    assert all(v[4].endswith("%") and ".." in v[5] for v in rows.values()), r.stdout


@pytest.mark.parametrize("args, words", [
    (["calibrate-cost"], "at most one baseline spec"),
    (["calibrate-cost", "getppid=1", "getppid=0", "read=0"], "at most one baseline spec"),
    (["calibrate-cost", "getppid=1", "nosuchcall=0"], "refused the baseline --cost nosuchcall=0"),
    (["calibrate", "x"], "non-negative integer"),
])
def test_calibration_errors_name_the_fault(root, bin_dir, args, words):
    r = _calibrate(root, bin_dir, *args)
    assert r.returncode == 1 and words in r.stderr, r.stderr
    assert "round 1" not in r.stdout


def test_calibration_without_a_mode_prints_usage_and_exits_2(root, bin_dir):
    r = _calibrate(root, bin_dir, "nosuchmode")
    assert r.returncode == 2 and "calibrate-cost NR=N[,NR=N...] [BASE]" in r.stderr
