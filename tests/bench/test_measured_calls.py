"""What the timed loops of single benchmarks call, seen by strace, and what
their samples record about the conditions of the measurement (issue 14).

strace sees every system call, so these tests name the exact call a case
times (and its arguments), not merely that the case ran. Nothing here
asserts on timings.
"""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest

from bench_runner import fixed, run_samples, strace_works


needs_strace = pytest.mark.skipif(not strace_works(), reason="strace missing or not allowed")


def strace(bin_dir, tmp_path, name, args, calls):
    """Runs bin_dir/name args under strace -f (TMPDIR a fresh directory);
    returns (CompletedProcess, trace lines, the TMPDIR it used)."""
    trace = tmp_path / "trace"
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, TMPDIR=str(work))
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=" + calls, "-o", str(trace),
                           str(bin_dir / name)] + args, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc, trace.read_text().splitlines(), work


# ---- lat_syscall stat / open: one relative component from a directory descriptor

@needs_strace
@pytest.mark.parametrize("variant", ["stat", "open"])
def test_strace_lat_syscall_file_ops_are_relative_to_a_dir_fd(bin_dir, tmp_path, variant):
    """stat times fstatat(dirfd, "file") (newfstatat or statx on the wire),
    open times openat(dirfd, "file"): one path component from a descriptor
    of the private directory, never an absolute path or AT_FDCWD, so the
    depth of $TMPDIR and the mounts it crosses are no part of the number."""
    iters, samples = 50, 3
    _, lines, work = strace(bin_dir, tmp_path, "lat_syscall", [variant] + fixed(iters, samples),
                            "openat,newfstatat,fstatat64,statx,stat,lstat,open")
    create = [l for l in lines if re.search(r'openat\(\d+, "file", [^)]*O_CREAT', l)]
    assert len(create) == 1, lines
    dir_fd = re.search(r"openat\((\d+),", create[0]).group(1)
    # that descriptor is the private directory under TMPDIR, opened before
    opened = [l for l in lines[:lines.index(create[0])] if "O_DIRECTORY" in l and str(work) in l]
    assert opened and opened[-1].rsplit("=", 1)[1].strip() == dir_fd, opened
    if variant == "stat":
        timed = [l for l in lines if re.search(r"\b(newfstatat|fstatat64|statx)\(", l) and '"file"' in l]
        assert all(re.search(rf"\(({dir_fd}), \"file\"", l) for l in timed), timed[:3]
        # every op of the samples and the setup probe, nothing else
        assert len(timed) == iters * samples + 1
    else:
        timed = [l for l in lines if "openat(" in l and '"file"' in l and "O_CREAT" not in l]
        assert all(l.split("openat(", 1)[1].startswith(f'{dir_fd}, "file", O_RDONLY') for l in timed), timed[:3]
        assert len(timed) == iters * samples + 1
    # no call names the file by a longer path
    assert not [l for l in lines if re.search(r'"/[^"]*/file"', l)]


# ---- the page-cached data files are synced in setup

CACHED_FILE_CASES = [
    ("lat_pagefault", ["file"]),
    ("lat_mmap", ["mmap", "--param", "size_kb=256"]),
    ("bw_file_rd", ["io_only", "--param", "size_kb=512"]),
    ("bw_mmap_rd", ["mmap_only", "--param", "size_kb=512"]),
]


@needs_strace
@pytest.mark.parametrize("name,args", CACHED_FILE_CASES, ids=[c[0] for c in CACHED_FILE_CASES])
def test_strace_cached_file_is_synced_in_setup(bin_dir, tmp_path, name, args):
    """The data file is fsynced on the descriptor it was written through,
    before that descriptor is closed and before anything else opens the
    file: no dirty page of it is left for writeback to meet (about 30 s
    later on a disk-backed file system) during this case's samples or a
    later case's."""
    _, lines, _ = strace(bin_dir, tmp_path, name, args + fixed(3, 2), "openat,fsync,fdatasync,close,write")
    create = [i for i, l in enumerate(lines) if re.search(r'openat\(AT_FDCWD, "[^"]*/data", [^)]*O_CREAT', l)]
    assert len(create) == 1, lines
    pid, fd = lines[create[0]].split()[0], lines[create[0]].rsplit("=", 1)[1].strip()
    after = [l for l in lines[create[0] + 1:] if l.split()[0] == pid]
    close_at = next(i for i, l in enumerate(after) if l.split(None, 1)[1].startswith(f"close({fd})"))
    before_close = after[:close_at]
    assert [l for l in before_close if re.match(rf"\S+\s+(fsync|fdatasync)\({fd}\) += 0", l)], before_close[-5:]
    assert not [l for l in before_close if '/data"' in l]  # nothing else opened it before the sync


# ---- bw_tcp: Nagle off on the writer

@needs_strace
def test_strace_bw_tcp_writer_sets_nodelay(bin_dir, tmp_path):
    """The descriptor every chunk is written to has TCP_NODELAY set before
    the first chunk: with Nagle on, the tail of a sample's last chunk could
    wait for a (delayed, up to 40 ms) ACK inside a 2 ms sample."""
    _, lines, _ = strace(bin_dir, tmp_path, "bw_tcp", ["stream", "--param", "chunk_kb=16"] + fixed(5, 2),
                         "setsockopt,write")
    nodelay = [(i, l) for i, l in enumerate(lines) if "TCP_NODELAY, [1]" in l and l.endswith("= 0")]
    assert nodelay, lines
    chunks = [(i, l) for i, l in enumerate(lines) if re.search(r'write\(\d+, "bbbb', l)]
    assert len(chunks) >= 5 * 2 + 1  # the samples' chunks and the probe's
    for i, l in chunks:
        pid, fd = l.split()[0], re.search(r"write\((\d+),", l).group(1)
        assert any(j < i and n.split()[0] == pid and f"setsockopt({fd}, SOL_TCP, TCP_NODELAY, [1]" in n
                   for j, n in nodelay), (l, nodelay)


# ---- lat_proc: the forking process's size, and fork from a parent of known size

def test_lat_proc_records_the_parent_size(bin_dir, tmp_path):
    """Every sample says how big the forking process was (its page tables are
    what fork copies), and fork_mem's parent holds the memory it was asked to
    touch: resident, on top of the plain fork's parent."""
    proc, small = run_samples(bin_dir, "lat_proc", ["fork"] + fixed(4, 3), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc, big = run_samples(bin_dir, "lat_proc", ["fork_mem", "--param", "parent_mb=64"] + fixed(4, 3),
                            tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for s in small + big:
        assert isinstance(s["parent_vm_kb"], int) and isinstance(s["parent_rss_kb"], int), s
        assert 0 < s["parent_rss_kb"] <= s["parent_vm_kb"]
        assert s["iters"] == 4
    assert [s["params"] for s in big] == ["parent_mb=64"] * 3
    for b in big:
        assert b["parent_rss_kb"] >= 64 * 1024 + min(s["parent_rss_kb"] for s in small) - 1024
        assert b["parent_vm_kb"] >= 64 * 1024
    assert max(s["parent_rss_kb"] for s in small) < 64 * 1024


def test_lat_proc_parent_size_null_without_proc(bin_dir, tmp_path):
    proc, samples = run_samples(bin_dir, "lat_proc", ["fork"] + fixed(2, 2), tmpdir=tmp_path,
                                env={"KBENCH_MISSING": "procfs"})
    assert proc.returncode == 0, proc.stderr
    assert all(s["parent_vm_kb"] is None and s["parent_rss_kb"] is None for s in samples)


@pytest.mark.parametrize("value", ["0", "x", "-5"])
def test_lat_proc_fork_mem_bad_size_is_a_usage_error(bin_dir, tmp_path, value):
    proc, _ = run_samples(bin_dir, "lat_proc", ["fork_mem", "--param", f"parent_mb={value}"] + fixed(),
                          tmpdir=tmp_path)
    assert proc.returncode == 2 and "parent_mb" in proc.stderr and "Traceback" not in proc.stderr


# ---- lat_fs: the mount and the disk beside fs_type

def _mount_of(path):
    """(per-mount options, super options, stat) of the mount holding path, from mountinfo; the
    options None where mountinfo has no such mount: in a chroot, the kernel leaves out every
    mount above its root, the one holding the chroot's own files among them."""
    st = os.stat(path)
    dev = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    real = os.path.realpath(path)
    best = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            w = left.split()
            if w[2] != dev:
                continue
            point = w[4]
            if point == "/" or real == point or real.startswith(point + "/"):
                if best is None or len(point) >= len(best[0]):
                    best = (point, w[5], right.split()[2])
    return (best[1], best[2], st) if best else (None, None, st)


@pytest.mark.parametrize("where", ["tmp", "shm"])
def test_lat_fs_records_the_mount_and_the_disk(bin_dir, tmp_path, where):
    base = tmp_path if where == "tmp" else pathlib.Path("/dev/shm")
    if where == "shm" and not base.is_dir():
        pytest.skip("no /dev/shm")
    target = pathlib.Path(tempfile.mkdtemp(dir=base))
    try:
        proc, samples = run_samples(bin_dir, "lat_fs", ["create", "--param", f"dir={target}"] + fixed(3, 2),
                                    tmpdir=tmp_path)
        assert proc.returncode == 0, proc.stderr
        opts, sup, st = _mount_of(target)
        for s in samples:
            if opts is None:
                # (a chroot) the binary finds no mount either, and says it cannot tell
                assert (s["mount_options"], s["backing_dev"], s["backing_dev_type"]) == ("unknown",) * 3, s
            else:
                got = s["mount_options"].split(",")
                assert set(got) == set(opts.split(",")) | set(sup.split(",")) and len(got) == len(set(got)), s
                if os.major(st.st_dev) == 0 and s["fs_type"] == "tmpfs":
                    assert s["backing_dev"] == "none" and s["backing_dev_type"] == "none"
                if os.major(st.st_dev) != 0:
                    disk = os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
                    if os.path.exists(disk + "/partition"):
                        disk = os.path.dirname(disk)
                    assert s["backing_dev"] == os.path.basename(disk)
                    assert s["backing_dev_type"] in ("virtio", "xen", "nvme", "ssd", "rotational", "loop",
                                                     "device-mapper", "md-raid", "zram")
            if s["fs_type"] == "ext4":
                # the kernel names a journal /proc/fs/jbd2/<partition>-<inode>
                part = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"))
                jbd2 = os.listdir("/proc/fs/jbd2") if os.path.isdir("/proc/fs/jbd2") else []
                assert s["fs_journal"] == ("jbd2" if any(e.startswith(part + "-") for e in jbd2) else "none"), s
            else:
                assert "fs_journal" not in s, s
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_lat_fs_mount_unknown_without_proc_and_sys(bin_dir, tmp_path):
    proc, samples = run_samples(bin_dir, "lat_fs", ["create"] + fixed(3, 1), tmpdir=tmp_path,
                                env={"KBENCH_MISSING": "procfs,sysfs"})
    assert proc.returncode == 0, proc.stderr
    assert {(s["mount_options"], s["backing_dev"], s["backing_dev_type"]) for s in samples} == \
        {("unknown", "unknown", "unknown")}
    assert all(s.get("fs_journal", "unknown") == "unknown" for s in samples)
