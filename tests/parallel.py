#!/usr/bin/python3
"""parallel.py — run the parts of a test pass at once and report each.

    parallel.py [--pytest COMMAND] [--job NAME COMMAND ...]

Every COMMAND (a /bin/sh command line) starts at once, in a process group
of its own, its output (stdout and stderr) kept in a file. As each ends, its
output is printed under one line: `== NAME: passed (83 s, CPU 41 s)` or
`== NAME: FAILED (exit 1, 83 s, CPU 41 s)` (CPU: user + system time of the
part and every process it waited for). The last lines list every part. Exit status: 0 when
every part exited 0, 1 otherwise, 2 on a usage error, 130 when interrupted
(every part is then stopped: SIGTERM to its group, SIGKILL 5 s later).

make test and the sanitizer pass use it: most of a pytest session of the
driver's tests is spent waiting (the driver's 0.5 s looks at the machine
before and after every run, the fakes' timeouts), so the parts together
fill the CPUs that one session at a time leaves idle.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


# The pytest parts of the C++ layers (tests/scripts, pure Python, is a part of
# make test's plain pass of its own). Each is a list of pytest arguments; the
# last is the rest of tests/, so that a new test file or directory is always
# in some part. test_driver.py alone: the longest chain of driver runs;
# test_smoke.py alone: every case of every binary, the costliest test.
PYTEST_PARTS = [
    ["tests/bench/test_smoke.py"],
    ["tests/bench", "tests/harness", "--ignore=tests/bench/test_smoke.py"],
    ["tests/driver/test_driver.py"],
    ["tests/system"],
    ["tests", "--ignore=tests/scripts", "--ignore=tests/bench", "--ignore=tests/harness",
     "--ignore=tests/driver/test_driver.py", "--ignore=tests/system"],
]


def pytest_part_name(args):
    return "pytest, the rest of tests/" if args[0] == "tests" else "pytest " + " ".join(args)


class Part:
    def __init__(self, name, command, log):
        self.name, self.command, self.log = name, command, log
        self.start = time.monotonic()
        self.proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.seconds = self.cpu = self.returncode = None
        self.stopped = False

    def ended(self):
        """Reaps the part when it has ended (wait4: its CPU time too)."""
        if self.returncode is None:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.seconds = time.monotonic() - self.start
                self.cpu = usage.ru_utime + usage.ru_stime
                self.returncode = os.waitstatus_to_exitcode(status)
                self.proc.returncode = self.returncode  # Popen need not wait again
        return self.returncode is not None

    def verdict(self):
        if self.returncode is None or self.stopped:
            return "stopped"
        times = f"{self.seconds:.0f} s, CPU {self.cpu:.0f} s"
        return f"passed ({times})" if self.returncode == 0 else f"FAILED (exit {self.returncode}, {times})"


def report(part, out):
    part.log.seek(0)
    text = part.log.read().decode(errors="replace")
    out.write(f"== {part.name}: {part.verdict()}\n")
    out.write(text if not text or text.endswith("\n") else text + "\n")
    out.flush()


def stop(parts):
    running = [p for p in parts if not p.ended()]
    for p in running:
        p.stopped = True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in running:
            try:
                os.killpg(p.proc.pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not all(p.ended() for p in running):
            time.sleep(0.1)


def main(argv):
    ap = argparse.ArgumentParser(prog="parallel.py", description="Run the parts of a test pass at once.")
    ap.add_argument("--job", nargs=2, action="append", metavar=("NAME", "COMMAND"), default=[],
                    help="a part: its name and its /bin/sh command line")
    ap.add_argument("--pytest", metavar="COMMAND",
                    help="a part for each of the pytest parts of the C++ layers: COMMAND (a pytest command "
                         "line) followed by the part's arguments")
    args = ap.parse_args(argv)
    if args.pytest:
        args.job += [(pytest_part_name(a), args.pytest + " " + " ".join(a)) for a in PYTEST_PARTS]
    if not args.job:
        ap.error("nothing to run: give --job or --pytest")
    names = [name for name, _ in args.job]
    if len(set(names)) != len(names) or not all(n.strip() for n in names):
        ap.error("every --job needs a name of its own")
    out = sys.stdout
    out.write("== at once: " + ", ".join(names) + "\n")
    out.flush()
    parts = []
    interrupted = False

    def on_signal(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    try:
        for name, command in args.job:
            parts.append(Part(name, command, tempfile.TemporaryFile(prefix="kbench-part-")))
        pending = list(parts)
        while pending:
            time.sleep(0.2)
            for p in [p for p in pending if p.ended()]:
                pending.remove(p)
                report(p, out)
    except KeyboardInterrupt:
        interrupted = True
        stop(parts)
    out.write("== parts: " + "; ".join(f"{p.name} {p.verdict()}" for p in parts) + "\n")
    out.flush()
    if interrupted:
        return 130
    return 0 if all(p.returncode == 0 for p in parts) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
