"""The one way the tests run a benchmark binary (the bench and harness
layers share it): by path under the build's bin directory, output captured,
samples parsed; which exits 77 (skipped) a test may accept."""
import copy
import json
import os
import pathlib
import re
import resource
import shutil
import socket
import statistics
import subprocess
import threading


def strace_works():
    """strace is installed and may trace here (not in every container)."""
    if not shutil.which("strace"):
        return False
    try:
        return subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_bench(bin_dir, name, args, tmpdir=None, env=None, timeout=120, **kw):
    """Run bin_dir/name with args; TMPDIR=tmpdir if given, env added to ours.
    Returns the CompletedProcess (text)."""
    e = dict(os.environ, **(env or {}))
    if tmpdir is not None:
        e["TMPDIR"] = str(tmpdir)
    return subprocess.run([str(bin_dir / name)] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=e, **kw)


def samples_of(stdout):
    """The sample objects of a binary's stdout (one JSON object per line)."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def run_samples(bin_dir, name, args, **kw):
    """(CompletedProcess, samples): the samples only when it exited 0."""
    proc = run_bench(bin_dir, name, args, **kw)
    return proc, samples_of(proc.stdout) if proc.returncode == 0 else []


def is_dynamic(path):
    """An ELF file with a program interpreter (LD_PRELOAD reaches it); False
    for a static build or a file that is not there."""
    import struct
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:
                return False
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            for i in range(phnum):
                f.seek(phoff + i * phentsize)
                if struct.unpack("<I", f.read(4))[0] == 3:  # PT_INTERP
                    return True
    except OSError:
        pass
    return False


_LISTED = {}


def list_cases(bin_dir, name):
    """The binary's --list lines as objects (it must exit 0 and list a case).
    One --list per binary file and session (a dozen tests read the lists of
    every binary: under ASan each --list is a 0.1 s process); every caller
    gets its own copy."""
    path = pathlib.Path(bin_dir) / name
    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _LISTED:
        r = run_bench(bin_dir, name, ["--list"], timeout=30)
        assert r.returncode == 0, f"{name} --list: exit {r.returncode}: {r.stderr}"
        cases = samples_of(r.stdout)
        assert cases, f"{name} --list printed no case"
        _LISTED[key] = cases
    return copy.deepcopy(_LISTED[key])


def fixed(iters=5, samples=2):
    """Options for exact counts and no warm-up: --iters N --samples S."""
    return ["--iters", str(iters), "--samples", str(samples), "--warmup-ms", "0"]


# ---- what every sample must satisfy, whatever the case

# %.6g in the JSON (src/harness/internal/json.cpp): ns_per_op carries six
# significant digits, so it may differ from elapsed_ns / iters by half a unit
# of the sixth, 5e-6 of the value at most. A divisor off by one (iters + 1)
# at the smoke tests' few iterations is a bias of 25%; even at 10^5 it is
# 1e-5, twice this bound.
NS_PER_OP_REL = 1e-5
# The stderr line prints three significant digits: 0.5% at most.
HUMAN_REL = 0.006
# bytes_per_op of a bandwidth case from its parameters: one pass over the
# buffer (bw_mem, bw_mmap_rd, bw_file_rd: size_kb) or one chunk (bw_pipe,
# bw_unix, bw_tcp: chunk_kb); ctl_machine mem reads its fixed 64 MB.
BYTES_PER_OP_PARAM = ("size_kb", "chunk_kb")
FIXED_BYTES_PER_OP = {("ctl_machine", "mem"): 64 << 20}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_sample_invariants(s, where):
    """The arithmetic every sample must satisfy (DESIGN: raw samples):
    iters > 0, elapsed_ns an integer > 0 (authoritative), ns_per_op ==
    elapsed_ns / iters within the JSON's rounding, bytes_per_op an integer
    > 0 on bandwidth samples only and what the case's parameters say,
    params canonical (sorted k=v). AssertionError naming the sample."""
    assert _is_int(s.get("iters")) and s["iters"] > 0, f"{where}: iters={s.get('iters')!r}"
    assert _is_int(s.get("elapsed_ns")) and s["elapsed_ns"] > 0, f"{where}: elapsed_ns={s.get('elapsed_ns')!r}"
    ns = s.get("ns_per_op")
    assert isinstance(ns, (int, float)) and not isinstance(ns, bool) and ns > 0, f"{where}: ns_per_op={ns!r}"
    expect = s["elapsed_ns"] / s["iters"]
    assert abs(ns - expect) <= NS_PER_OP_REL * expect, \
        f"{where}: ns_per_op={ns!r} but elapsed_ns / iters = {s['elapsed_ns']} / {s['iters']} = {expect!r}"
    for key in ("rep_idx", "sample_idx", "t_start_ns"):
        assert _is_int(s.get(key)) and s[key] >= 0, f"{where}: {key}={s.get(key)!r}"
    for key in ("cpu", "partner_cpu"):
        assert key in s and (s[key] is None or (_is_int(s[key]) and s[key] >= 0)), f"{where}: {key}={s.get(key)!r}"
    params = [kv.split("=", 1) for kv in s["params"].split(",")] if s.get("params") else []
    assert all(len(kv) == 2 and kv[0] for kv in params), f"{where}: params={s.get('params')!r}"
    keys = [k for k, _ in params]
    assert keys == sorted(set(keys)), f"{where}: params {s['params']!r} not sorted or repeated"
    if s.get("metric") == "bandwidth":
        b = s.get("bytes_per_op")
        assert _is_int(b) and b > 0, f"{where}: bytes_per_op={b!r}"
        p = dict(params)
        sized = [k for k in BYTES_PER_OP_PARAM if k in p]
        fixed = FIXED_BYTES_PER_OP.get((s.get("bench"), s.get("variant")))
        assert sized or fixed, f"{where}: a bandwidth case whose bytes_per_op no parameter gives (add it here)"
        want = int(p[sized[0]]) * 1024 if sized else fixed
        assert b == want, f"{where}: bytes_per_op={b} but its parameters say {want}"
    else:
        assert "bytes_per_op" not in s, f"{where}: bytes_per_op on a latency sample"


_HUMAN_NUM = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?) (ns|µs|ms|s|B/s|kB/s|MB/s|GB/s|TB/s)"
_HUMAN_SCALE = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9,
                "B/s": 1.0, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12}


def check_human_line(case, samples, stderr, where):
    """The stderr line for people says what the samples say: the median and
    the best sample (min time, or max bandwidth = bytes_per_op * 1e9 / min
    ns_per_op) of their ns_per_op, to its three digits."""
    m = re.search(rf"^{re.escape(case)}: median {_HUMAN_NUM}(?: \(10\^\d+ B/s\))?(?: per op)?, (?:min|max) "
                  rf"{_HUMAN_NUM},", stderr, re.M)
    assert m, f"{where}: no summary line in {stderr!r}"
    med, best = (float(m.group(i)) * _HUMAN_SCALE[m.group(i + 1)] for i in (1, 3))
    ns = [s["ns_per_op"] for s in samples]
    want_med, want_best = statistics.median(ns), min(ns)
    if samples[0]["metric"] == "bandwidth":
        b = samples[0]["bytes_per_op"] * 1e9
        want_med, want_best = b / want_med, b / want_best
    for got, want, what in ((med, want_med, "median"), (best, want_best, "best")):
        assert abs(got - want) <= HUMAN_REL * want, f"{where}: the stderr {what} is {got:g}, the samples' {want:g}"


# ---- exit 77: only named cases, only for a reason that holds on this machine
#
# A harness that skipped everything would pass any test that accepts 77
# from every case. Each entry: which cases may skip, how their skip line
# reads, why, and whether that reason holds here (a function of the match).

def _cpus():
    return len(os.sched_getaffinity(0))


def _has_loopback(family, address):
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.bind((address, 0))
        return True
    except OSError:
        return False


def _mem_available_mb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def _short_of_memory(m):
    """The binary's test (src/harness/memory.cpp) is bytes + max(256 MB,
    available / 8) > available; ours allows for what freed up since, 25%."""
    need = int(m.group(1))
    return _mem_available_mb() < 1.25 * max(need + 256, need * 8 / 7)


def _fd_hard_limit_below(m):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return hard != resource.RLIM_INFINITY and hard < int(m.group(1))


SOCKET_BENCHES = {"lat_udp", "lat_tcp", "lat_connect", "bw_tcp"}
MEMORY_BENCHES = {"bw_file_rd", "bw_mem", "bw_mmap_rd", "lat_mem_rd", "lat_mmap", "lat_pagefault", "lat_proc"}


def _uses_ipv4_loopback(c):
    return ((c["bench"] in SOCKET_BENCHES and "family=ipv6" not in c.get("params", ""))
            or (c["bench"] == "lat_select" and "type=tcp" in c.get("params", "")))


ALLOWED_SKIPS = [
    (lambda c: c.get("placement") == "cross", r"skipped: CPU \d+ is not available here",
     "@cross needs a second CPU", lambda m: _cpus() < 2),
    (lambda c: "family=ipv6" in c.get("params", ""),
     r"skipped: no IPv6 (sockets in this kernel|loopback address ::1)",
     "no IPv6 loopback", lambda m: not _has_loopback(socket.AF_INET6, "::1")),
    (_uses_ipv4_loopback, r"skipped: no IPv4 (sockets in this kernel|loopback address 127\.0\.0\.1)",
     "no IPv4 loopback", lambda m: not _has_loopback(socket.AF_INET, "127.0.0.1")),
    (lambda c: c["bench"] in MEMORY_BENCHES, r"skipped: .* needs (\d+) MB of free memory plus a \d+ MB margin",
     "not enough free memory", _short_of_memory),
    (lambda c: c["bench"] == "lat_select", r"skipped: .* needs (\d+) file descriptors; the limit \(ulimit -n\)",
     "the hard limit of descriptors is too low", _fd_hard_limit_below),
    (lambda c: c["bench"] == "lat_proc" and c.get("variant") == "shell", r"skipped: no /bin/sh",
     "no /bin/sh", lambda m: not os.access("/bin/sh", os.X_OK)),
]


def allowed_skip(case, proc):
    """Why `proc` (a run of `case`, a --list object) may have exited 77
    here, or None: the case must be named in ALLOWED_SKIPS, its skip line
    must give that entry's reason, and the reason must hold here."""
    if proc.returncode != 77 or proc.stdout.strip():
        return None
    for applies, pattern, why, holds in ALLOWED_SKIPS:
        m = re.search(pattern, proc.stderr)
        if applies(case) and m and holds(m):
            return why
    return None


# Every allowed exit 77 of the session, (case, why): tests/conftest.py lists
# them at the end, so that a skipped case never passes unseen.
ALLOWED_SKIPS_SEEN = []


def ran_or_allowed_skip(case, proc, where=None):
    """True: the case ran (exit 0); False: it skipped (77) for an allowed
    reason that holds here (recorded in ALLOWED_SKIPS_SEEN). Anything else
    fails (AssertionError)."""
    where = where or case.get("case") or f'{case["bench"]} {case.get("variant", "")}'
    if proc.returncode == 0:
        return True
    assert proc.returncode == 77, f"{where}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}"
    why = allowed_skip(case, proc)
    assert why, (f"{where}: skipped (77) though nothing this case needs is missing here: "
                 f"{proc.stderr.strip()[-300:]}")
    ALLOWED_SKIPS_SEEN.append((case.get("case") or where, why))
    return False


# ---- bounded waits on a running binary (subprocess.Popen with pipes)

def within(timeout, fn, proc, what):
    """fn() (a read of proc's pipes) in a thread, for at most `timeout`
    seconds; past that proc is killed and the test fails: no test waits
    forever on a binary that hangs."""
    got = []
    reader = threading.Thread(target=lambda: got.append(fn()), daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        proc.kill()
        reader.join(10)
        raise AssertionError(f"{what}: nothing within {timeout} s (killed the process)")
    return got[0]


def first_line(proc, timeout=60):
    """The first line of proc's stdout, waiting at most `timeout` seconds."""
    return within(timeout, proc.stdout.readline, proc, f"first line of {proc.args[0]}")


def drain(stream):
    """Reads `stream` to its end in a daemon thread, throwing it away: a
    binary that keeps writing samples while a test waits for something else
    must never block on a full pipe (64 KB: about 90 samples)."""
    def loop():
        while stream.read(65536):
            pass
    threading.Thread(target=loop, daemon=True).start()


def stderr_of(proc, timeout=30):
    """All of proc's stderr, for a failure message: the process is killed
    first if it still runs, so that reading to the end cannot hang."""
    if proc.poll() is None:
        proc.kill()
    return within(timeout, proc.stderr.read, proc, f"stderr of {proc.args[0]}")
