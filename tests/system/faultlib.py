"""Helpers of the fault and security tests (issue 8); fixtures are in conftest.py.

- one case per (binary, variant) from --list, for the tests that run
  "every kind of case" without running all of them;
- processes: children of a pid, alive-or-zombie;
- dropping to an unprivileged user (uid/gid 65534) with optional limits;
- a mounted tmpfs: fill, remount;
- JSON Lines that a crash may have cut short.
"""
import json
import os
import pathlib
import subprocess

import bench_runner  # tests/bench, on the path (tests/conftest.py)
from driver_runner import run_text  # tests/driver, on the path too

FAKES = pathlib.Path(__file__).resolve().parent.parent / "fake_bench"
NOBODY = 65534
IS_ROOT = os.geteuid() == 0


def bench_binaries(bin_dir):
    return sorted(p for p in bin_dir.iterdir()
                  if p.is_file() and os.access(p, os.X_OK) and not p.name.startswith("kbench-"))


def list_cases(binary):
    """The --list objects of a binary (bench_runner's: one --list per binary and session)."""
    return bench_runner.list_cases(binary.parent, binary.name)


def one_case_per_variant(bin_dir):
    """(binary path, case) for the first listed case of every variant."""
    picked = []
    for b in bench_binaries(bin_dir):
        seen = set()
        for c in list_cases(b):
            if c["variant"] not in seen:
                seen.add(c["variant"])
                picked.append((b, c))
    return picked


def proc_stat(pid):
    """(state, ppid) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def children_of(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st and st[1] == pid:
                kids.append(int(entry))
    return kids


def descendants_of(pid):
    out, todo = [], [pid]
    while todo:
        for k in children_of(todo.pop()):
            out.append(k)
            todo.append(k)
    return out


def running(pid):
    """Alive and not a zombie (a killed process waits as Z for its reaper)."""
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def drop_privileges(nproc=None):
    """A preexec_fn: become uid/gid 65534 (when root), optionally with RLIMIT_NPROC."""
    import resource

    def fn():
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if IS_ROOT:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
    return fn


def unprivileged_can_run(build_dir):
    """The build must be reachable by uid 65534 (not under a 0700 directory)."""
    p = pathlib.Path(build_dir).resolve()
    for parent in [p] + list(p.parents):
        if not os.stat(parent).st_mode & 0o001:
            return False
    return True


class Tmpfs:
    def __init__(self, path):
        self.path = path

    def remount(self, opts):
        subprocess.run(["mount", "-o", f"remount,{opts}", str(self.path)], check=True,
                       capture_output=True, text=True, timeout=60)

    def free_bytes(self):
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def fill(self, leave_bytes=0, name="filler"):
        """Writes a file until only about `leave_bytes` are free."""
        with open(self.path / name, "wb") as f:
            chunk = b"x" * 4096
            while self.free_bytes() > leave_bytes:
                try:
                    f.write(chunk)
                    f.flush()
                except OSError:
                    break
        return self.path / name


def read_jsonl_lenient(path):
    """(complete lines parsed, trailing partial text) — a crash may cut the
    last line. PATH or, once the run has ended, its compressed PATH.gz."""
    text = run_text(path.parent, path.name)
    body, _, partial = text.rpartition("\n")
    lines = [json.loads(line) for line in body.splitlines() if line.strip()]
    return lines, partial

