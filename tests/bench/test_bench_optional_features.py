"""Kernels without an optional feature: every case runs without it and says
so in its samples, or skips (exit 77) with the reason; never exit 1.

Each absence is simulated with KBENCH_MISSING=FEATURE (the names are listed
at simulated_missing in src/harness/sys.hpp), which fails the call that finds the feature with the error
such a kernel gives, so these paths run on every machine. The assertions are
on exit codes, sample keys and reason text, never on timings.
"""
import os

import pytest

from bench_runner import fixed, run_bench, run_samples


def missing(*features):
    return {"KBENCH_MISSING": ",".join(features)}


def skipped_with(proc, bench, reason):
    """Exit 77 and the reason as the last stderr line (what the driver records)."""
    assert proc.returncode == 77, (proc.returncode, proc.stderr)
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{bench}: skipped: {reason}"), last
    assert proc.stdout == ""


# ---- transparent huge pages (lat_pagefault anon) ----------------------------

def test_pagefault_anon_without_thp_runs_and_says_so(bin_dir, tmp_path):
    """Debian's PREEMPT_RT 6.1 kernel has no THP: MADV_NOHUGEPAGE fails with
    EINVAL. No huge pages means nothing to avoid: the case runs, every sample
    says "thp": "unavailable"."""
    proc, samples = run_samples(bin_dir, "lat_pagefault", ["anon"] + fixed(8, 3), tmpdir=tmp_path,
                                env=missing("thp"))
    assert proc.returncode == 0, proc.stderr
    assert len(samples) == 3
    assert all(s["thp"] == "unavailable" for s in samples)
    assert all(s["minflt"] >= 8 for s in samples)   # still one fault per page at least


def test_pagefault_anon_with_thp_says_off(bin_dir, tmp_path):
    proc, samples = run_samples(bin_dir, "lat_pagefault", ["anon"] + fixed(8, 2), tmpdir=tmp_path)
    assert proc.returncode == 0, proc.stderr
    want = "off" if os.path.isdir("/sys/kernel/mm/transparent_hugepage") else "unavailable"
    assert [s["thp"] for s in samples] == [want, want]


def test_pagefault_file_has_no_thp_key(bin_dir, tmp_path):
    proc, samples = run_samples(bin_dir, "lat_pagefault", ["file"] + fixed(8, 1), tmpdir=tmp_path,
                                env=missing("thp"))
    assert proc.returncode == 0, proc.stderr
    assert "thp" not in samples[0]


# ---- IPv6 and the loopback interface -----------------------------------------

IPV6_CASES = [("lat_udp", "rt"), ("lat_tcp", "rt"), ("lat_connect", "connect")]


@pytest.mark.parametrize("bench,variant", IPV6_CASES)
def test_no_ipv6_in_the_kernel_skips(bin_dir, tmp_path, bench, variant):
    """No ipv6 module (or ipv6.disable=1): socket(AF_INET6) is EAFNOSUPPORT."""
    proc = run_bench(bin_dir, bench, [variant, "--param", "family=ipv6"] + fixed(), tmpdir=tmp_path,
                     env=missing("ipv6"))
    skipped_with(proc, bench, "no IPv6 sockets in this kernel (Address family not supported by protocol)")


@pytest.mark.parametrize("bench,variant", IPV6_CASES)
def test_ipv6_disabled_on_lo_skips(bin_dir, tmp_path, bench, variant):
    """disable_ipv6=1: the socket opens, binding ::1 is EADDRNOTAVAIL."""
    proc = run_bench(bin_dir, bench, [variant, "--param", "family=ipv6"] + fixed(), tmpdir=tmp_path,
                     env=missing("ipv6_loopback"))
    skipped_with(proc, bench, "no IPv6 loopback address ::1 (Cannot assign requested address): IPv6 disabled")


@pytest.mark.parametrize("bench,variant", IPV6_CASES)
def test_ipv4_runs_without_ipv6(bin_dir, tmp_path, bench, variant):
    proc, samples = run_samples(bin_dir, bench, [variant, "--param", "family=ipv4"] + fixed(), tmpdir=tmp_path,
                                env=missing("ipv6", "ipv6_loopback"))
    assert proc.returncode == 0, proc.stderr
    assert len(samples) == 2


@pytest.mark.parametrize("bench,args", [("lat_tcp", ["rt"]), ("lat_udp", ["rt"]), ("bw_tcp", ["stream"]),
                                        ("lat_connect", ["connect"]),
                                        ("lat_select", ["poll", "--param", "type=tcp", "--param", "fds=10"])])
def test_loopback_down_skips(bin_dir, tmp_path, bench, args):
    """A minimal initramfs that never ran `ip link set lo up`: no 127.0.0.1."""
    proc = run_bench(bin_dir, bench, args + fixed(), tmpdir=tmp_path, env=missing("loopback"))
    skipped_with(proc, bench, "no IPv4 loopback address 127.0.0.1 (Cannot assign requested address): "
                              "the loopback interface is down")


# ---- epoll, futex ------------------------------------------------------------

def test_no_epoll_skips_and_select_poll_still_run(bin_dir, tmp_path):
    tcp = ["--param", "type=tcp", "--param", "fds=10"]
    proc = run_bench(bin_dir, "lat_select", ["epoll"] + tcp + fixed(), tmpdir=tmp_path, env=missing("epoll"))
    skipped_with(proc, "lat_select", "epoll is not in this kernel (epoll_create1: ENOSYS; CONFIG_EPOLL=n)")
    for call in ("select", "poll"):
        proc, samples = run_samples(bin_dir, "lat_select", [call] + tcp + fixed(), tmpdir=tmp_path,
                                    env=missing("epoll"))
        assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("variant,flavour", [("thread", "private"), ("process", "shared")])
def test_no_futex_skips_before_any_partner(bin_dir, tmp_path, variant, flavour):
    proc = run_bench(bin_dir, "lat_futex", [variant] + fixed(), tmpdir=tmp_path, env=missing("futex"))
    skipped_with(proc, "lat_futex", f"futex is not in this kernel ({flavour} FUTEX_WAKE: ENOSYS; CONFIG_FUTEX=n)")
    assert "partner served" not in proc.stderr


# ---- /proc not mounted ---------------------------------------------------------

@pytest.mark.parametrize("bench,args", [("lat_syscall", ["null"]), ("lat_pipe", ["rt"]),
                                        ("lat_proc", ["exec"]), ("lat_proc", ["shell"]),
                                        ("bw_mem", ["rd", "--param", "size_kb=64"]),
                                        ("lat_pagefault", ["file"])])
def test_without_proc_cases_run_with_null_noise_markers(bin_dir, tmp_path, bench, args):
    """No /proc: the noise markers are null, lat_proc finds its helper through
    AT_EXECFN, the free-memory check uses sysinfo(2)."""
    env = dict(missing("procfs"))
    env.pop("KBENCH_EXEC_HELPER", None)
    proc, samples = run_samples(bin_dir, bench, args + fixed(3, 2), tmpdir=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    for s in samples:
        assert s["run_delay_ns"] is None and s["steal_ns"] is None and s["migrations"] is None


# ---- CPUs: one-CPU guests, hotplug ------------------------------------------------

def test_cross_on_one_cpu_skips_with_the_reason(bin_dir, tmp_path):
    """A one-CPU guest: the @cross placement names a second CPU that is not there."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    proc = run_bench(bin_dir, "lat_pipe", ["rt", "--cpu", cpu, "--partner-cpu", cpu + 1] + fixed(), tmpdir=tmp_path,
                     preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    skipped_with(proc, "lat_pipe", f"CPU {cpu + 1} is not available here (online and allowed: {cpu})")


def test_cpu_gone_offline_skips(bin_dir, tmp_path):
    """The CPU went offline between the driver's --list and the run:
    sched_setaffinity fails with EINVAL."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    proc = run_bench(bin_dir, "lat_syscall", ["null", "--cpu", cpu] + fixed(), tmpdir=tmp_path,
                     env=missing("cpu_hotplug"))
    skipped_with(proc, "lat_syscall", f"CPU {cpu} went offline (sched_setaffinity: EINVAL)")
