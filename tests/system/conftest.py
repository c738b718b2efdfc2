"""Fixtures of the fault and security tests (issue 8); helpers in faultlib.py.

- the driver binary and the fake benchmarks;
- an unprivileged user (uid/gid 65534 when run as root) and a directory it
  can write (pytest's own tmp_path is private to root);
- a 1 MB tmpfs mounted for one test (root only, skipped otherwise).

Sanitizer builds: these tests run under `make test-asan` too (KBENCH_BUILD);
the sanitizer log directory is writable by every user there, so the
unprivileged runs can still report.
"""
import fcntl
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from faultlib import FAKES, IS_ROOT, NOBODY, Tmpfs, drop_privileges, unprivileged_can_run


@pytest.fixture(scope="session")
def fakes():
    return FAKES


@pytest.fixture
def user_dir():
    """A directory the unprivileged user may write (removed afterwards)."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="kbfault-"))
    os.chmod(d, 0o755)
    if IS_ROOT:
        os.chown(d, NOBODY, NOBODY)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def as_nobody(build_dir):
    """drop_privileges, held alone: one test at a time runs processes as uid
    65534 across every pytest session on this machine (make test runs
    several at once), because RLIMIT_NPROC counts all of that uid's
    processes: a second test's would make the fork-limit tests fail
    elsewhere than where they expect."""
    if IS_ROOT and not unprivileged_can_run(build_dir):
        pytest.skip(f"{build_dir} is not reachable by uid {NOBODY} (a 0700 directory above it)")
    uid = NOBODY if IS_ROOT else os.geteuid()
    with open(pathlib.Path(tempfile.gettempdir()) / f"kbench-tests-uid{uid}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield drop_privileges  # when not root: the caller, already an ordinary user


@pytest.fixture
def tmpfs(tmp_path):
    """Mounts a 1 MB tmpfs (root only; skipped otherwise) and unmounts it after."""
    if not IS_ROOT:
        pytest.skip("mounting a tmpfs needs root")
    if not shutil.which("mount"):
        pytest.skip("no mount(8)")
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0777", "kbench-fault", str(mnt)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield Tmpfs(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=60)
