"""lat_sig catch counts its deliveries: every sample's handler count must equal
the kills it timed, exactly (issue 14, item 12). No timings are asserted."""
import signal
import subprocess
import time

from bench_runner import first_line, run_samples, stderr_of

TIMEOUT = 60


def test_catch_exact_counts(bin_dir):
    proc, samples = run_samples(bin_dir, "lat_sig", ["catch", "--iters", "777", "--samples", "4"], timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert [s["iters"] for s in samples] == [777] * 4


def test_catch_fails_on_a_signal_from_elsewhere(bin_dir):
    """A SIGUSR1 sent from outside during a sample makes the handler count
    one more than the kills timed: a failure, not a sample."""
    proc = subprocess.Popen([str(bin_dir / "lat_sig"), "catch", "--iters", "1000", "--samples", "100000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first_line(proc), stderr_of(proc)   # set up, handler installed, sampling
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(0.002)
        assert proc.poll() is not None, "lat_sig catch ran on with foreign SIGUSR1s"
        err = stderr_of(proc)
        assert proc.returncode == 1, err
        assert "lat_sig: SIGUSR1 handled " in err and " kills" in err, err
        handled, kills = [int(w) for w in err.split("SIGUSR1 handled ", 1)[1].split()[0:4:3]]
        assert handled > kills
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(TIMEOUT)


def test_catch_fails_when_the_signal_is_blocked(bin_dir):
    """SIGUSR1 blocked (an inherited mask): the kills are not delivered,
    the probe fails before any sample."""
    proc = subprocess.run([str(bin_dir / "lat_sig"), "catch", "--iters", "10", "--samples", "2"],
                          capture_output=True, text=True, timeout=TIMEOUT,
                          preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1}))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert "lat_sig: SIGUSR1 handled 0 times for 1 kills" in proc.stderr
