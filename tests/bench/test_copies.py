"""--copies N|all (scaling mode): N copies of a case at once, each pinned to
its own CPU by the placement rule (copy i on the i-th allowed CPU, its
partner on the same CPU), released together, each sample line naming its
copy; the operations counted outside the harness (strace, the partners'
own counts) are exactly N x (samples x iters + the setup probe); nothing is
left behind after SIGTERM; more copies than CPUs is a usage error unless
--oversubscribe; on one CPU the copies skip (77)."""
import collections
import os
import re
import signal
import subprocess

import pytest

from bench_runner import first_line, fixed, run_bench, samples_of, stderr_of, strace_works

CPUS = sorted(os.sched_getaffinity(0))
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs")


def by_sample(samples):
    out = collections.defaultdict(list)
    for s in samples:
        out[s["sample_idx"]].append(s)
    return out


def check_copies(samples, n, iters, nsamples, case, mode="processes", two_party=False):
    """n lines per sample, in copy order, each on the CPU of the rule."""
    assert len(samples) == n * nsamples
    for idx, group in by_sample(samples).items():
        assert [s["copy_idx"] for s in group] == list(range(n))
        assert [s["cpu"] for s in group] == [CPUS[i % len(CPUS)] for i in range(n)]
        assert [s["partner_cpu"] for s in group] == ([s["cpu"] for s in group] if two_party else [None] * n)
        assert sum(s["iters"] for s in group) == n * iters
        for s in group:
            assert (s["case"], s["copies"], s["copy_mode"], s["iters"]) == (case, n, mode, iters)
            assert s["placement"] == ("same" if two_party else "pinned")
            assert s["oversubscribed"] == (n > len(CPUS))
    assert sorted(by_sample(samples)) == list(range(nsamples))


@two_cpus
@pytest.mark.skipif(not strace_works(), reason="strace missing or not allowed")
def test_two_cpus_null_copies_strace_counts_the_calls(bin_dir, tmp_path):
    """lat_syscall null --copies all: every copy's getppid calls are seen by
    strace: copies x (samples x iters + 1 probe), and no other."""
    iters, samples, n = 40, 3, len(CPUS)
    trace = tmp_path / "trace"
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=getppid", "-o", str(trace),
                           str(bin_dir / "lat_syscall"), "null", "--copies", "all"] + fixed(iters, samples),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    check_copies(samples_of(proc.stdout), n, iters, samples, f"lat_syscall null x{n}")
    calls = [l for l in trace.read_text().splitlines() if re.match(r"\d+ +getppid\(", l)]
    # each copy is its own process: samples x iters + the probe + the copy's
    # own check of its parent after fork (PR_SET_PDEATHSIG)
    per_pid = collections.Counter(l.split()[0] for l in calls)
    assert sorted(per_pid.values()) == [iters * samples + 2] * n, per_pid


@two_cpus
def test_two_cpus_udp_pairs_per_cpu(bin_dir):
    """Two-party: a partner per copy on its copy's CPU; each partner serves
    exactly samples x iters + the probe."""
    iters, samples = 25, 2
    proc = run_bench(bin_dir, "lat_udp", ["rt", "--copies", "2"] + fixed(iters, samples), timeout=120)
    assert proc.returncode == 0, proc.stderr
    check_copies(samples_of(proc.stdout), 2, iters, samples, "lat_udp rt family=ipv4,size=1 @same x2",
                 two_party=True)
    served = re.findall(r"partner served (\d+) operations", proc.stderr)
    assert served == [str(iters * samples + 1)] * 2
    # the lines for people: each copy's, and the coordinator's aggregate
    case, t = "lat_udp rt family=ipv4,size=1 @same x2", r"\d+(?:\.\d+)? (?:ns|µs|ms|s)"
    assert len(re.findall(rf"^{re.escape(case)} copy [01] \(CPU \d+\): median {t} per op, min {t}, ", proc.stderr,
                          re.M)) == 2, proc.stderr
    assert re.search(rf"^{re.escape(case)}: 2 copies: aggregate median \d+(?:\.\d+)?[kMGT]? ops/s, per copy median "
                     rf"{t} per op$", proc.stderr, re.M), proc.stderr


@two_cpus
def test_two_cpus_cross_pairs(bin_dir):
    """--cross-pairs: copy i's partner on the next CPU (i+1 mod n): every
    pair spans two CPUs; each partner serves exactly its count."""
    iters, samples, n = 15, 2, len(CPUS)
    proc = run_bench(bin_dir, "lat_udp", ["rt", "--copies", "all", "--cross-pairs"] + fixed(iters, samples), timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = samples_of(proc.stdout)
    assert len(got) == n * samples
    for s in got:
        i = s["copy_idx"]
        assert (s["cpu"], s["partner_cpu"], s["placement"]) == (CPUS[i], CPUS[(i + 1) % n], "cross")
        assert s["case"] == f"lat_udp rt family=ipv4,size=1 @cross x{n}"
    assert re.findall(r"partner served (\d+) operations", proc.stderr) == [str(iters * samples + 1)] * n


@two_cpus
def test_two_cpus_threads_are_one_process(bin_dir):
    """--threads: the copies are threads of one process (no fork), pinned
    like processes; every copy faults its own pages (minflt of the process,
    all copies, at least the copy's pages)."""
    iters, samples = 64, 2
    proc = run_bench(bin_dir, "lat_pagefault", ["anon", "--copies", "2", "--threads"] + fixed(iters, samples),
                     timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = samples_of(proc.stdout)
    check_copies(got, 2, iters, samples, "lat_pagefault anon threads x2", mode="threads")
    assert all(s["minflt"] >= iters for s in got)
    assert all(s["run_delay_ns"] is None for s in got)  # /proc/self is the main thread's


@two_cpus
@pytest.mark.skipif(not strace_works(), reason="strace missing or not allowed")
def test_two_cpus_null_copies_threads_strace_sees_thread_clones(bin_dir, tmp_path):
    """--threads makes threads of one process, never a fork (strace: two
    clones, both CLONE_THREAD). "strace" in the name: the sanitizer pass
    runs it with leak detection off, which cannot run under ptrace."""
    trace = tmp_path / "trace"
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=clone,clone3,fork,vfork", "-o", str(trace),
                        str(bin_dir / "lat_syscall"), "null", "--copies", "2", "--threads"] + fixed(5, 1),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    clones = trace.read_text().splitlines()
    assert len(clones) == 2 and all("CLONE_THREAD" in l for l in clones), clones


def test_copies_of_a_control_are_no_control(bin_dir):
    """N copies of a control case trace no machine speed: control false."""
    proc = run_bench(bin_dir, "ctl_machine", ["alu", "--copies", "1"] + fixed(5, 1), timeout=60)
    if len(CPUS) < 2:
        assert proc.returncode == 77
        return
    assert proc.returncode == 0, proc.stderr
    assert [s["control"] for s in samples_of(proc.stdout)] == [False]
    plain = run_bench(bin_dir, "ctl_machine", ["alu"] + fixed(5, 1), timeout=60)
    assert [s["control"] for s in samples_of(plain.stdout)] == [True]


def test_more_copies_than_cpus_is_a_usage_error(bin_dir):
    n = len(CPUS) + 1
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--copies", str(n)] + fixed(5, 1), timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert f"--copies {n}: only {len(CPUS)} CPUs available to this process" in proc.stderr
    assert "--oversubscribe" in proc.stderr


def test_oversubscribe_runs_and_says_so(bin_dir):
    n = len(CPUS) + 1
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--copies", str(n), "--oversubscribe"] + fixed(5, 2),
                     timeout=120)
    assert proc.returncode == 0, proc.stderr
    check_copies(samples_of(proc.stdout), n, 5, 2, f"lat_syscall null x{n}")


def test_one_cpu_skips_unless_oversubscribed(bin_dir):
    one = lambda: os.sched_setaffinity(0, {CPUS[0]})  # noqa: E731
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--copies", "all"] + fixed(5, 1), timeout=60,
                     preexec_fn=one)
    assert proc.returncode == 77
    assert proc.stdout == ""
    assert "skipped: scaling needs two CPUs or more (one available here)" in proc.stderr
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--copies", "2", "--oversubscribe"] + fixed(5, 1),
                     timeout=60, preexec_fn=one)
    assert proc.returncode == 0, proc.stderr
    got = samples_of(proc.stdout)
    assert [s["cpu"] for s in got] == [CPUS[0]] * 2 and all(s["oversubscribed"] for s in got)


@pytest.mark.parametrize("args,message", [
    (["--threads"], "--threads needs --copies"),
    (["--oversubscribe"], "--oversubscribe needs --copies"),
    (["--copies", "0"], "bad value '0' for --copies"),
    (["--copies", "two"], "bad value 'two' for --copies"),
    (["--copies", "2", "--cpu", "0"], "--copies places every copy itself"),
    (["--cross-pairs"], "--cross-pairs needs --copies"),
    (["--copies", "1", "--cross-pairs", "--oversubscribe"], "--cross-pairs: this case has no partner process"),
])
def test_bad_copies_options(bin_dir, args, message):
    proc = run_bench(bin_dir, "lat_syscall", ["null"] + args + fixed(5, 1), timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == "" and message in proc.stderr


def test_threads_of_a_two_party_case_is_a_usage_error(bin_dir):
    proc = run_bench(bin_dir, "lat_udp", ["rt", "--copies", "2", "--threads"] + fixed(5, 1), timeout=60)
    assert proc.returncode == 2
    assert "--threads: copies of a two-party case are processes" in proc.stderr


# ---- SIGTERM with N copies (and their partners) running

def descendants(pid):
    """(pid, start time) of every process below pid."""
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(entry)] = (int(fields[1]), int(fields[19]))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for child, (ppid, start) in procs.items():
            if ppid == p:
                out.append((child, start))
                todo.append(child)
    return out


def alive(proc_id):
    try:
        with open(f"/proc/{proc_id[0]}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return int(fields[19]) == proc_id[1] and fields[0] != "Z"


@two_cpus
@pytest.mark.parametrize("case,extra,expect", [
    (["lat_udp", "rt"], [], 4),                    # 2 copies + 2 partners
    (["lat_syscall", "stat"], [], 2),              # 2 copies, a directory each
    (["lat_syscall", "stat"], ["--threads"], 0),   # 2 threads, a directory each
])
def test_two_cpus_sigterm_leaves_nothing(bin_dir, tmp_path, case, extra, expect):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([str(bin_dir / case[0]), case[1], "--copies", "2", "--samples", "100000",
                             "--min-sample-ms", "1", "--warmup-ms", "0"] + extra,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert first_line(proc, 60).startswith(b"{"), stderr_of(proc)
        below = descendants(proc.pid)
        assert len(below) == expect, below
        if case[1] == "stat":
            assert len(list(tmp_path.iterdir())) == 2
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, stderr_of(proc)
    # the coordinator waits for its copies, each copy for its partner
    assert not [p for p in below if alive(p)], "copies or partners left behind"
    assert list(tmp_path.iterdir()) == []


def test_copies_keys_are_documented(root, bin_dir):
    """The keys --copies adds to a sample are exactly the ones the
    reference's paragraph on them names (src/reference/formats.md)."""
    ref = (root / "src" / "reference" / "formats.md").read_text()
    para = ref.split("With `--copies`", 1)[1].split("\n\n", 1)[0]
    added = {"copies", "copy_idx", "copy_mode", "oversubscribed"}
    for key in added:
        assert f"`{key}`" in para
    plain = samples_of(run_bench(bin_dir, "lat_syscall", ["null"] + fixed(5, 1), timeout=60).stdout)[0]
    copy = samples_of(run_bench(bin_dir, "lat_syscall", ["null", "--copies", "1", "--oversubscribe"] + fixed(5, 1),
                                timeout=60).stdout)[0]
    assert set(copy) - set(plain) == added and set(plain) <= set(copy)
