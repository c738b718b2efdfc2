"""The partners' CPU time in every sample (partner_cpu_ns): from
/proc/<pid>/schedstat in ns, not /proc/<pid>/stat in clock ticks (issue 14,
item 7). No timings are asserted, only what the numbers are made of."""
from bench_runner import run_samples

TIMEOUT = 60
TICK_NS = 10_000_000   # one USER_HZ tick: what /proc/<pid>/stat counts in


def test_partner_cpu_time_in_ns(bin_dir):
    proc, samples = run_samples(bin_dir, "lat_pipe", ["rt", "--iters", "2000", "--samples", "5"], timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    vals = [s["partner_cpu_ns"] for s in samples]
    assert all(isinstance(v, int) and v > 0 for v in vals), vals   # the partner echoed 2000 bytes
    # In ticks every value would be a whole number of 10 ms (most of them 0).
    assert any(v % TICK_NS for v in vals), vals


def test_ring_partners_summed(bin_dir):
    """lat_ctx ring: P-1 partner processes, each reading and writing every
    round: their CPU time is there in every sample."""
    proc, samples = run_samples(bin_dir, "lat_ctx", ["ring", "--param", "procs=4", "--iters", "400",
                                                     "--samples", "3"], timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert all(isinstance(s["partner_cpu_ns"], int) and s["partner_cpu_ns"] > 0 for s in samples)


def test_no_partner_process_is_null(bin_dir):
    proc, samples = run_samples(bin_dir, "lat_syscall", ["null", "--iters", "100", "--samples", "2"], timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert [s["partner_cpu_ns"] for s in samples] == [None, None]


def test_without_procfs_null_not_zero(bin_dir):
    proc, samples = run_samples(bin_dir, "lat_pipe", ["rt", "--iters", "100", "--samples", "2"],
                                env={"KBENCH_MISSING": "procfs"}, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert [s["partner_cpu_ns"] for s in samples] == [None, None]
