"""Behaviour of the IPC and context-switch benchmarks (issue 3).

No timings are asserted. What is checked:
- the case lists the report scripts rely on;
- in --iters mode the partner's own count of what it served equals the
  operations timed exactly (plus the documented one-op setup probe);
- after kill -TERM, and after a normal exit, no child process and no socket
  of the binary survives;
- lat_connect leaves no TIME_WAIT sockets behind;
- family=ipv6 is a skip (77) on a machine without an IPv6 loopback;
- out-of-range parameters are usage errors (2).
"""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from bench_runner import (first_line, list_cases, ran_or_allowed_skip, run_bench, samples_of, stderr_of,
                          strace_works, within)

ITERS, SAMPLES = 50, 3
FIXED = ["--iters", str(ITERS), "--samples", str(SAMPLES), "--warmup-ms", "0"]
TIMEOUT = 60


def n_cpus():
    return len(os.sched_getaffinity(0))


# ---- the case lists ---------------------------------------------------------

EXPECTED = {
    "lat_pipe": {("rt", "")},
    "lat_unix": {("rt", "")},
    "lat_udp": {("rt", "family=ipv4,size=1"), ("rt", "family=ipv4,size=1024"),
                ("rt", "family=ipv4,size=8192"), ("rt", "family=ipv6,size=1")},
    "lat_tcp": {("rt", "family=ipv4,size=1"), ("rt", "family=ipv4,size=1024"),
                ("rt", "family=ipv6,size=1")},
    "lat_connect": {("connect", "family=ipv4"), ("connect", "family=ipv6")},
    "lat_ctx": {(v, f"procs={p},size_kb={s}") for v in ("ring", "work", "overhead")
                for p in (2, 4, 8, 16) for s in (0, 16, 64)},
    "lat_futex": {("thread", ""), ("process", "")},
    "bw_pipe": {("stream", "chunk_kb=64")},
    "bw_unix": {("stream", "chunk_kb=64")},
    "bw_tcp": {("stream", "chunk_kb=64")},
}


@pytest.mark.parametrize("bench", sorted(EXPECTED))
def test_case_list(bin_dir, bench):
    cases = list_cases(bin_dir, bench)
    assert {(c["variant"], c["params"]) for c in cases} == EXPECTED[bench]
    for c in cases:
        one_party = bench == "lat_ctx" and c["variant"] in ("work", "overhead")
        assert c["two_party"] is (not one_party)
        assert c["metric"] == ("bandwidth" if bench.startswith("bw_") else "latency")
    placements = {c["placement"] for c in cases if c["two_party"]}
    if placements:
        assert placements == {"same", "cross", "unpinned"}


# ---- exact counts in --iters mode ---------------------------------------------

SERVED = re.compile(r"^(\w+): partner served (\d+) (operations|chunks|connections)$", re.M)
PASSED = re.compile(r"^lat_ctx: process (\d+) passed the token (\d+) times$", re.M)

# (bench, variant, params): every one must report 1 (setup probe) + timed ops.
COUNTED = [
    ("lat_pipe", "rt", {}),
    ("lat_unix", "rt", {}),
    ("lat_udp", "rt", {"size": "1"}),
    ("lat_udp", "rt", {"size": "8192"}),
    ("lat_tcp", "rt", {"size": "1"}),
    ("lat_tcp", "rt", {"size": "1024"}),
    ("lat_connect", "connect", {}),
    ("lat_futex", "thread", {}),
    ("lat_futex", "process", {}),
    ("bw_pipe", "stream", {}),
    ("bw_unix", "stream", {}),
    ("bw_tcp", "stream", {}),
]

PLACEMENTS = {
    "same": ["--cpu", "0", "--partner-cpu", "0"],
    "cross": ["--cpu", "0", "--partner-cpu", "1"],
    "unpinned": [],
}


def placement_args(name):
    if name == "cross" and n_cpus() < 2:
        pytest.skip("one CPU: no cross-CPU placement")
    cpus = sorted(os.sched_getaffinity(0))
    args = list(PLACEMENTS[name])
    # Use CPUs this process may actually run on.
    if args:
        args[1] = str(cpus[0])
        args[3] = str(cpus[0] if name == "same" else cpus[1])
    return args


def param_args(params):
    out = []
    for k, v in params.items():
        out += ["--param", f"{k}={v}"]
    return out


def check_samples(stdout, bench, variant):
    s = samples_of(stdout)
    assert len(s) == SAMPLES
    for x in s:
        assert x["bench"] == bench and x["variant"] == variant
        assert x["iters"] == ITERS
    return s


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize("bench,variant,params", COUNTED,
                         ids=[f"{b}-{v}-{','.join(p.values())}" for b, v, p in COUNTED])
def test_partner_count_equals_timed_ops(bin_dir, bench, variant, params, placement):
    r = run_bench(bin_dir, bench, [variant] + param_args(params) + FIXED + placement_args(placement))
    assert r.returncode == 0, r.stderr
    s = check_samples(r.stdout, bench, variant)
    if bench.startswith("bw_"):
        assert all(x["bytes_per_op"] == 64 * 1024 for x in s)
    found = SERVED.findall(r.stderr)
    assert len(found) == 1, r.stderr
    name, n, _ = found[0]
    assert name == bench
    assert int(n) == 1 + SAMPLES * ITERS


@pytest.mark.parametrize("placement", sorted(PLACEMENTS))
@pytest.mark.parametrize("procs", [2, 3, 4, 8])
def test_ring_hops_equal_timed_hops(bin_dir, procs, placement):
    # 50 hops per sample with P = 3 or 8 does not divide into rounds: the
    # last hop of a sample must still be counted exactly once.
    r = run_bench(bin_dir, "lat_ctx", ["ring", "--param", f"procs={procs}", "--param", "size_kb=16"] + FIXED +
            placement_args(placement))
    assert r.returncode == 0, r.stderr
    check_samples(r.stdout, "lat_ctx", "ring")
    found = PASSED.findall(r.stderr)
    assert sorted(int(i) for i, _ in found) == list(range(procs)), r.stderr
    # The setup probe is one full round: P hops.
    assert sum(int(n) for _, n in found) == procs + SAMPLES * ITERS


@pytest.mark.parametrize("bench,args", [("lat_ctx", ["ring", "--param", "procs=2"]), ("lat_futex", ["thread"]),
                                       ("lat_futex", ["process"]), ("lat_connect", ["connect"]),
                                       ("lat_pipe", ["rt"])])
def test_counts_without_fixed_iters_are_silent(bin_dir, bench, args):
    """Every partner reports its count through one harness helper
    (kbench::report_count), which is silent unless --iters."""
    r = run_bench(bin_dir, bench, args + ["--samples", "2", "--min-sample-ms", "1", "--warmup-ms", "0"])
    assert r.returncode == 0, r.stderr
    assert not PASSED.findall(r.stderr) and not SERVED.findall(r.stderr)


def test_counts_are_printed_by_the_harness_helper_only(root):
    """No benchmark hand-rolls its --iters count line (issue 14, item 15)."""
    for f in sorted((root / "src" / "bench").glob("*.cpp")):
        text = f.read_text()
        assert "passed the token %" not in text and "partner served %" not in text, f.name
        assert not re.search(r"fixed_iters\(\)\)?\s*(\{\s*)?std::fprintf", text), f.name


def test_work_variant_is_one_party(bin_dir):
    r = run_bench(bin_dir, "lat_ctx", ["work", "--param", "procs=4", "--param", "size_kb=16"] + FIXED)
    assert r.returncode == 0, r.stderr
    s = check_samples(r.stdout, "lat_ctx", "work")
    assert all(x["partner_cpu"] is None for x in s)
    r = run_bench(bin_dir, "lat_ctx", ["work", "--partner-cpu", "0"] + FIXED)
    assert r.returncode == 2


@pytest.mark.parametrize("procs", [2, 3, 8])
def test_overhead_variant_is_a_hop_without_a_switch(bin_dir, procs):
    """lat_ctx overhead: one process, and its pipe reads never block, so no
    sample has a voluntary context switch (the ring switches on every hop on
    one CPU); the summary's switch is ring - overhead."""
    r = run_bench(bin_dir, "lat_ctx", ["overhead", "--param", f"procs={procs}", "--param", "size_kb=16"] + FIXED)
    assert r.returncode == 0, r.stderr
    s = check_samples(r.stdout, "lat_ctx", "overhead")
    assert all(x["partner_cpu"] is None and x["partner_cpu_ns"] is None for x in s)
    assert [x["nvcsw"] for x in s] == [0] * SAMPLES
    r = run_bench(bin_dir, "lat_ctx", ["ring", "--param", f"procs={procs}", "--cpu", "0", "--partner-cpu", "0"]
                  + FIXED)
    assert r.returncode == 0, r.stderr
    # one switch per hop, voluntary (a blocking read) or not (a wake-up preempting the writer)
    assert all(x["nvcsw"] + x["nivcsw"] >= ITERS for x in check_samples(r.stdout, "lat_ctx", "ring"))
    ring = [c for c in list_cases(bin_dir, "lat_ctx") if c["variant"] == "ring" and c["summary"]]
    assert ring and all(c["summary"]["minus"] == "overhead" for c in ring)
    r = run_bench(bin_dir, "lat_ctx", ["overhead", "--partner-cpu", "0"] + FIXED)
    assert r.returncode == 2


# ---- nothing survives the binary ----------------------------------------------

def proc_children(pid):
    """All descendants of pid, as (pid, starttime) so pid reuse is not mistaken for a survivor."""
    by_parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = proc_stat(int(entry))
        if st:
            by_parent.setdefault(st[0], []).append((int(entry), st[1]))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for child in by_parent.get(p, []):
            out.append(child)
            todo.append(child[0])
    return out


def proc_stat(pid):
    """(ppid, starttime) of pid, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[19])


def alive(pid, start):
    st = proc_stat(pid)
    return st is not None and st[1] == start


def socket_inodes(pid):
    out = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in names:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.match(r"socket:\[(\d+)\]", link)
        if m:
            out.add(int(m.group(1)))
    return out


def net_sockets():
    """inode -> (table, state) for every socket in /proc/net/{tcp,tcp6,udp,udp6}."""
    out = {}
    for table in ("tcp", "tcp6", "udp", "udp6"):
        try:
            with open(f"/proc/net/{table}") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            inode = int(parts[9])
            if inode:
                out[inode] = (table, parts[3])
    return out


LISTEN = "0A"

# (bench, args): one per kind of partner/socket arrangement.
SURVIVORS = [
    ("lat_pipe", ["rt"]),
    ("lat_udp", ["rt", "--param", "family=ipv4"]),
    ("lat_tcp", ["rt"]),
    ("lat_connect", ["connect"]),
    ("lat_ctx", ["ring", "--param", "procs=8", "--param", "size_kb=16"]),
    ("lat_futex", ["process"]),
    ("lat_futex", ["thread"]),
    ("bw_tcp", ["stream"]),
    ("bw_unix", ["stream"]),
]


def start_and_inspect(bin_dir, bench, args):
    """Starts the binary, waits for its first sample, returns (proc, children, inodes)."""
    p = subprocess.Popen([str(bin_dir / bench)] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    line = first_line(p, TIMEOUT)
    assert line, stderr_of(p)
    json.loads(line)
    children = proc_children(p.pid)
    inodes = set()
    for pid in [p.pid] + [c for c, _ in children]:
        inodes |= socket_inodes(pid)
    return p, children, inodes


def assert_nothing_left(children, inodes):
    # They go at once (the binary reaps its partners before it exits); the
    # bound only keeps a failure from hanging, with room for a loaded machine.
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and any(alive(*c) for c in children):
        time.sleep(0.05)
    assert not [c for c in children if alive(*c)], "child processes survived"
    left = {i: s for i, s in net_sockets().items() if i in inodes}
    assert not left, f"sockets survived: {left}"


@pytest.mark.parametrize("bench,args", SURVIVORS, ids=[f"{b}-{a[0]}" for b, a in SURVIVORS])
def test_kill_term_leaves_nothing(bin_dir, bench, args):
    p, children, inodes = start_and_inspect(bin_dir, bench, args + ["--samples", "100000"])
    try:
        expected_children = {"lat_ctx": 7, "lat_futex": 1 if args[0] == "process" else 0}.get(bench, 1)
        assert len(children) == expected_children
        if bench == "lat_connect":
            # The listener exists while it runs, owned by the partner only.
            assert LISTEN in {s for i, (_, s) in net_sockets().items() if i in inodes}
            assert not (socket_inodes(p.pid) & {i for i, (_, s) in net_sockets().items() if s == LISTEN})
        p.send_signal(15)
        p.communicate(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=60)
    assert p.returncode == 143
    assert_nothing_left(children, inodes)


@pytest.mark.parametrize("bench,args", SURVIVORS, ids=[f"{b}-{a[0]}" for b, a in SURVIVORS])
def test_normal_exit_leaves_nothing(bin_dir, bench, args):
    p, children, inodes = start_and_inspect(bin_dir, bench, args + ["--samples", "200", "--min-sample-ms", "1"])
    try:
        # p.stdout.read(), not communicate(): communicate reads the pipe
        # beneath the text buffer, losing lines readline() already buffered
        out = within(TIMEOUT, p.stdout.read, p, f"{bench} samples")
        err = within(TIMEOUT, p.stderr.read, p, f"{bench} stderr")
        p.wait(timeout=TIMEOUT)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=60)
    assert p.returncode == 0, err
    assert len(samples_of(out)) == 199  # the first was read before
    assert_nothing_left(children, inodes)


# ---- ports, IPv6, parameters ---------------------------------------------------

TIME_WAIT = "06"


def time_wait_ports():
    """Local and peer ports of every TIME_WAIT socket (orphaned, so inode 0)."""
    ports = []
    for table in ("tcp", "tcp6"):
        with open(f"/proc/net/{table}") as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split()
                if parts[3] == TIME_WAIT:
                    ports += [int(parts[1].rsplit(":", 1)[1], 16), int(parts[2].rsplit(":", 1)[1], 16)]
    return ports


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_connect_leaves_no_time_wait(bin_dir, family):
    n = 2000
    r = run_bench(bin_dir, "lat_connect", ["connect", "--param", f"family={family}", "--iters", str(n),
                                     "--samples", "2", "--warmup-ms", "0"])
    case = {"bench": "lat_connect", "variant": "connect", "params": f"family={family}", "placement": "unpinned"}
    if not ran_or_allowed_skip(case, r):  # no IPv6 loopback here: the only skip allowed
        pytest.skip(r.stderr.strip())
    assert SERVED.findall(r.stderr)[0][1] == str(1 + 2 * n)
    # Other programs' TIME_WAIT sockets do not count: only those of this
    # run's listener port (recorded in the samples).
    port = int(samples_of(r.stdout)[0]["server_port"])
    assert port not in time_wait_ports()


@pytest.mark.skipif(not strace_works(), reason="strace missing or not allowed")
def test_strace_connect_waits_for_the_servers_close(bin_dir, tmp_path):
    """Every connection is timed to the server's acknowledgement: the client
    reads end-of-file before its close, and that end-of-file comes after the
    server has accepted the connection and begun to close it (its FIN)."""
    trace = tmp_path / "trace"
    iters, samples = 20, 3
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect,accept4,read,close", "-o", str(trace),
                        str(bin_dir / "lat_connect"), "connect", "--iters", str(iters), "--samples", str(samples),
                        "--warmup-ms", "0"], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr
    lines = trace.read_text().splitlines()
    client = lines[0].split()[0]
    connects = eofs = server_closes = 0
    accepted, client_fd = set(), None
    for line in lines:
        pid, call = line.split(None, 1)
        if pid == client:
            if m := re.match(r"connect\((\d+), \{sa_family=AF_INET,", call):
                assert client_fd is None, "a second connect before the first connection's close"
                client_fd = m.group(1)
                connects += 1
            elif re.match(r'(read\(\d+, |<\.\.\. read resumed>)"", 1\) += 0$', call):
                eofs += 1
                # the server began closing this connection before the client saw it end
                assert server_closes >= eofs, line
            elif client_fd is not None and re.match(rf"close\({client_fd}[) ]", call):
                assert eofs == connects, f"closed before the server's close: {line}"
                client_fd = None
        else:
            if m := re.match(r"(accept4\(\d+, NULL, NULL, SOCK_CLOEXEC|<\.\.\. accept4 resumed>).*= (\d+)$", call):
                accepted.add(m.group(2))
            elif (m := re.match(r"close\((\d+)", call)) and m.group(1) in accepted:
                accepted.discard(m.group(1))
                server_closes += 1
    assert connects == eofs == server_closes == 1 + samples * iters


def no_ipv6_shell():
    """A command prefix running in a network namespace whose loopback has no IPv6. Root makes
    it without a user namespace: in a chroot the kernel refuses root a user namespace (EPERM:
    its root is not its mount namespace's), not a network namespace."""
    if not shutil.which("unshare") or not shutil.which("ip") or not shutil.which("sysctl"):
        return None
    prefix = ["unshare", "-n" if os.geteuid() == 0 else "-rn", "sh", "-c",
              'ip link set lo up && sysctl -qw net.ipv6.conf.lo.disable_ipv6=1 && exec "$@"', "sh"]
    probe = subprocess.run(prefix + ["true"], capture_output=True, timeout=60)
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize("bench,variant", [("lat_udp", "rt"), ("lat_tcp", "rt"), ("lat_connect", "connect")])
def test_ipv6_without_ipv6_loopback_is_skipped(bin_dir, bench, variant):
    prefix = no_ipv6_shell()
    if prefix is None:
        pytest.skip("cannot make a network namespace without IPv6 here")
    cmd = prefix + [str(bin_dir / bench), variant, "--param", "family=ipv6"] + FIXED
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 77, r.stderr
    assert "skipped" in r.stderr and "IPv6" in r.stderr
    assert r.stdout == ""
    # IPv4 still works in the same namespace.
    cmd = prefix + [str(bin_dir / bench), variant, "--param", "family=ipv4"] + FIXED
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("bench,args", [
    ("lat_udp", ["rt", "--param", "size=0"]),
    ("lat_udp", ["rt", "--param", "size=70000"]),
    ("lat_udp", ["rt", "--param", "family=ipx"]),
    ("lat_tcp", ["rt", "--param", "size=0"]),
    ("lat_ctx", ["ring", "--param", "procs=1"]),
    ("lat_ctx", ["work", "--param", "procs=1"]),
    ("bw_pipe", ["stream", "--param", "chunk_kb=0"]),
    ("lat_pipe", ["rt", "--param", "size=2"]),
])
def test_bad_parameters_are_usage_errors(bin_dir, bench, args):
    r = run_bench(bin_dir, bench, args + FIXED)
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
