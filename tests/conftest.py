"""Shared pytest fixtures: where the build and the repository are; the
check that no test skips where it could run."""
import fnmatch
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
# the shared runners of the layers: bench_runner (bench and harness tests),
sys.path.insert(0, str(ROOT / "tests" / "bench"))
# and driver_runner (driver and system tests)
sys.path.insert(0, str(ROOT / "tests" / "driver"))

from bench_runner import strace_works  # noqa: E402  (after the path is set)


def pytest_addoption(parser):
    parser.addoption("--build-tests-only", action="store_true",
                     help="only the tests that run something of the build (those that use the build_dir "
                          "fixture) and not under strace: the sanitizer pass, where the others (the "
                          "Makefile, the README, scripts/vm-run, the scripts) would only run again what "
                          "the plain pass ran, and LeakSanitizer cannot run under ptrace")
    parser.addoption("--no-asan-share", action="store_true",
                     help="the plain pass of make test: not the tests that the ASan+UBSan pass runs (those "
                          "that use the build_dir fixture), except those whose names say strace "
                          "(LeakSanitizer cannot run under ptrace, so only the plain pass runs them)")
    parser.addoption("--shard", metavar="K/N",
                     help="only the K-th of N parts of the tests, split by file (every N-th file of the "
                          "sorted list, from the K-th): make test runs tests/scripts as two parts at once")


def uses_the_build(item):
    return "build_dir" in getattr(item, "fixturenames", ())


def runs_under_strace(item):
    """A test that runs the build under strace says so in its name (test_strace_...,
    ..._seen_by_strace): the plain pass's alone, whichever pass asks."""
    return "strace" in item.name.lower()


def plain_pass_only(item):
    """A test marked plain_pass runs the build, but in the plain pass alone: the
    ASan pass runs the same code in a test beside it (the smoke test's middle
    cases: the same code as the first and last case of their variant, which
    the ASan pass runs, at sizes between)."""
    return item.get_closest_marker("plain_pass") is not None


def in_the_asan_share(item):
    return uses_the_build(item) and not runs_under_strace(item) and not plain_pass_only(item)


def pytest_configure(config):
    config.addinivalue_line("markers", "plain_pass: runs the build, in make test's plain pass only "
                                       "(the ASan pass runs the same code in another test)")


def shard(text):
    """--shard K/N as (K, N), 1 <= K <= N; a usage error otherwise."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise pytest.UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 1/2")
    return k, n


def in_the_shard(items, k, n):
    """The items of every N-th test file, from the K-th, in the sorted order of
    the files collected: a file's tests (and its module fixtures) stay in one
    part, and every file is in exactly one of the N parts."""
    files = sorted({str(item.path) for item in items})
    mine = {f for i, f in enumerate(files) if i % n == k - 1}
    return [item for item in items if str(item.path) in mine]


def pytest_collection_modifyitems(config, items):
    if config.getoption("--build-tests-only") and config.getoption("--no-asan-share"):
        raise pytest.UsageError("--build-tests-only and --no-asan-share exclude each other")
    keep = items
    if config.getoption("--build-tests-only"):
        keep = [item for item in keep if in_the_asan_share(item)]
    elif config.getoption("--no-asan-share"):
        keep = [item for item in keep if not in_the_asan_share(item)]
    if config.getoption("--shard"):
        keep = in_the_shard(keep, *shard(config.getoption("--shard")))
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def build_dir():
    """The build tree `make test` just built (KBENCH_BUILD, default build/)."""
    path = ROOT / os.environ.get("KBENCH_BUILD", "build")
    if not (path / "bin").is_dir():
        pytest.fail(f"{path}/bin does not exist: run `make` first (make test does)")
    return path


@pytest.fixture(scope="session")
def bin_dir(build_dir):
    return build_dir / "bin"


@pytest.fixture(scope="session")
def driver(bin_dir):
    """build/bin/kbench-run (the driver tests and the fault tests use it)."""
    path = bin_dir / "kbench-run"
    if not path.exists():
        pytest.fail(f"{path} does not exist: run `make` first")
    return path


# ---- skips: every one is printed with its reason (make test runs pytest -rs),
# and none may hide a test that this machine can run.
#
# MAY_SKIP names every test that may skip, what it needs, and how to tell
# whether this machine has it. At the end of the session a skip fails the
# run when the test is not listed here, or when the machine has what it
# needs (strace installed by tests/ensure-deps.sh, root, two CPUs, ...).

def _has_cap_sys_admin():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) & (1 << 21))
    except OSError:
        pass
    return False


def _root_may_mount():
    return os.geteuid() == 0 and _has_cap_sys_admin() and shutil.which("mount") is not None


def _build():
    return ROOT / os.environ.get("KBENCH_BUILD", "build")


def _nobody_reaches_the_build():
    """Not root (the tests run as the caller), or every directory above the
    build lets others through (uid 65534 can run the binaries)."""
    if os.geteuid() != 0:
        return True
    p = _build().resolve()
    return all(os.stat(d).st_mode & 0o001 for d in [p] + list(p.parents))


def _dynamic_binaries():
    from bench_runner import is_dynamic
    return is_dynamic(_build() / "bin" / "lat_syscall")


def _has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def _perf_usable():
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return int(f.read()) < 3 or os.geteuid() == 0
    except OSError:
        return False


def _perf_sees_the_kernel():
    """perf installed (tests/ensure-deps.sh installs linux-perf), allowed to
    sample the kernel (root or perf_event_paranoid <= 1), kernel symbols
    visible (kptr_restrict), and a recording of `true` works."""
    import tempfile
    perf = shutil.which("perf")
    try:
        paranoid = int(open("/proc/sys/kernel/perf_event_paranoid").read())
        with open("/proc/kallsyms") as f:
            hidden = set(f.readline().split(" ")[0]) <= {"0"}
    except (OSError, ValueError):
        return False
    if not perf or hidden or (os.geteuid() != 0 and paranoid >= 2):
        return False
    try:
        with tempfile.TemporaryDirectory() as d:
            return subprocess.run([perf, "record", "-e", "cpu-clock", "-N", "-q", "-o", f"{d}/p.data", "--", "true"],
                                  capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _has_numpy():
    try:
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def _netns_tools():
    return _root_may_mount() and all(shutil.which(t) for t in ("unshare", "ip", "sysctl"))


MAY_SKIP = [
    # (test id pattern, what it needs, does this machine have it)
    ("*test_fsvm.py::test_lat_fs_counts_seen_by_strace*", "strace that may trace", strace_works),
    ("*test_security.py::test_strace_*", "strace that may trace", strace_works),
    ("*test_measured_calls.py::test_strace_*", "strace that may trace", strace_works),
    ("*test_ipc.py::test_strace_*", "strace that may trace", strace_works),
    ("*test_security.py::test_planted_symlinks_not_followed", "dynamically linked binaries", _dynamic_binaries),
    ("*test_security.py::test_*_as_ordinary_user", "a build uid 65534 can reach (when root)",
     _nobody_reaches_the_build),
    ("*test_faults.py::test_unwritable_results_dir", "a build uid 65534 can reach (when root)",
     _nobody_reaches_the_build),
    ("*test_faults.py::test_fork_fails_under_rlimit_nproc*", "a build uid 65534 can reach (when root)",
     _nobody_reaches_the_build),
    ("*test_faults.py::test_driver_records_fork_failure", "root and a build uid 65534 can reach",
     lambda: os.geteuid() == 0 and _nobody_reaches_the_build()),
    ("*test_faults.py::test_readonly_filesystem_keeps_earlier_runs", "root allowed to mount a tmpfs", _root_may_mount),
    ("*test_faults.py::test_disk_full_*", "root allowed to mount a tmpfs", _root_may_mount),
    ("*test_ipc.py::*cross*", "two CPUs", lambda: len(os.sched_getaffinity(0)) >= 2),
    ("*test_copies.py::test_two_cpus_null_copies*", "two CPUs and strace that may trace",
     lambda: len(os.sched_getaffinity(0)) >= 2 and strace_works()),
    ("*test_copies.py::test_two_cpus_*", "two CPUs", lambda: len(os.sched_getaffinity(0)) >= 2),
    ("*test_ipc.py::test_ipv6_without_ipv6_loopback_is_skipped*", "root allowed to make a network namespace, "
     "with unshare, ip and sysctl", _netns_tools),
    ("*test_ipc.py::test_connect_leaves_no_time_wait*", "an IPv6 loopback", _has_ipv6_loopback),
    ("*test_counters.py::test_fork_children_are_counted", "perf events (root or perf_event_paranoid < 3)",
     _perf_usable),
    ("*test_profile_perf.py::test_real_perf_*", "perf that may sample the kernel (linux-perf; root or "
     "perf_event_paranoid <= 1; kptr_restrict letting it name kernel functions)", _perf_sees_the_kernel),
    ("*test_profile_perf.py::test_*_as_ordinary_user", "a build uid 65534 can reach (when root)",
     _nobody_reaches_the_build),
    ("*test_quick.py::test_make_quick_on_a_cheap_case", "numpy for the summary (tests/ensure-deps.sh installs it)",
     _has_numpy),
    ("*test_kb_page_width.py::*", "chromium (tests/ensure-deps.sh installs it where it can)",
     lambda: bool(shutil.which("chromium") or shutil.which("chromium-browser"))),
]

# {node id: (what happened, reason)}: skips of a test (at setup or in its
# body), skips of a whole module at collection (pytest.skip(...,
# allow_module_level=True), importorskip: the node id is the module's), and
# xfails (expected failures, and xfail-marked tests that passed): each hides
# a test, so each must be listed in MAY_SKIP and lack what it needs here.
_skipped = {}


def _reason(longrepr):
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report):
    if hasattr(report, "wasxfail"):
        if report.skipped or report.passed:
            what = "xfailed" if report.skipped else "xpassed"
            _skipped[report.nodeid] = (what, report.wasxfail.removeprefix("reason: ") or "no reason given")
    elif report.skipped:
        _skipped[report.nodeid] = ("skipped", _reason(report.longrepr))


def pytest_collectreport(report):
    if report.skipped:
        _skipped[report.nodeid] = ("skipped at collection", _reason(report.longrepr))


def _unjustified_skips():
    bad = []
    for nodeid, (what, reason) in sorted(_skipped.items()):
        entry = next((e for e in MAY_SKIP if fnmatch.fnmatchcase(nodeid, e[0])), None)
        if entry is None:
            bad.append(f"{nodeid}: {what} ({reason}), and tests/conftest.py MAY_SKIP does not list it")
        elif entry[2]():
            bad.append(f"{nodeid}: {what} ({reason}), though this machine has {entry[1]}")
    return bad


def pytest_sessionfinish(session, exitstatus):
    bad = _unjustified_skips()
    session.config.stash[_SKIP_FAILURES] = bad
    if bad and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_SKIP_FAILURES = pytest.StashKey[list]()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    bad = config.stash.get(_SKIP_FAILURES, [])
    if bad:
        terminalreporter.section("skipped tests this machine can run (a failure)", sep="=", red=True, bold=True)
        for line in bad:
            terminalreporter.line(line)
    elif _skipped:
        terminalreporter.line(f"{len(_skipped)} skipped, each for something this machine lacks (the reasons: SKIPPED below)")
    else:
        terminalreporter.line("no test skipped")
    # benchmark cases that exited 77 where bench_runner.ALLOWED_SKIPS allows it
    # (the test passed without them): named, never silent
    from bench_runner import ALLOWED_SKIPS_SEEN
    if ALLOWED_SKIPS_SEEN:
        seen = sorted(set(ALLOWED_SKIPS_SEEN))
        terminalreporter.line(f"{len(seen)} benchmark case(s) skipped (exit 77) for what this machine lacks:")
        for case, why in seen:
            terminalreporter.line(f"  {case}: {why}")
