"""The running guest: the QEMU process, its console relayed to the terminal
(progress on one line where stderr is one), the console's markers kept,
stopped at the limit or when vm-run ends."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time


class Guest:
    """The QEMU process, its console relayed to the terminal while it runs."""

    def __init__(self, cmd, console, data, limit):
        self.cmd, self.console, self.data, self.limit = cmd, console, data, limit
        self.proc = None
        self.tty = sys.stderr.isatty()
        self.open_line = False
        self.markers = {}
        self.in_data = False

    def _relay(self, text):
        # kbench-run writes its progress with \r on the guest's console (a tty).
        for seg in re.split(r"\r\n|\n|\r", text):
            seg = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", seg).rstrip()
            if not seg:
                continue
            if self.in_data or seg.startswith("KBENCH-DATA-"):
                # The run's archive on the console (arm64): not for the terminal.
                if seg.startswith("KBENCH-DATA-BEGIN"):
                    self.in_data = True
                    self._line("guest: sending the run back on the console", False)
                elif seg.startswith("KBENCH-DATA-END"):
                    self.in_data = False
                continue
            if seg.startswith("KBENCH-"):
                word, _, rest = seg.partition(" ")
                self.markers.setdefault(word, []).append(rest)
                if word == "KBENCH-BOOTED":
                    self._line(f"guest: booted, in its init after {rest} s", False)
                elif word in ("KBENCH-MODULE", "KBENCH-FS", "KBENCH-UNAME"):
                    self._line(f"guest: {word[len('KBENCH-'):].lower()}: {rest}", False)
                continue
            progress = seg.startswith("rep ") and " case " in seg
            self._line(f"guest: {seg}", progress)

    def _line(self, text, progress):
        if self.tty and progress:
            sys.stderr.write("\r\x1b[K" + text[:(shutil.get_terminal_size().columns - 1)])
            self.open_line = True
        elif progress:
            return self._plain_progress(text)
        else:
            if self.open_line:
                sys.stderr.write("\r\x1b[K")
                self.open_line = False
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def _plain_progress(self, text):
        # Not a terminal: one line a case would flood a log; say each new
        # rep, and where it is every 30 s.
        m = re.match(r"guest: rep (\d+)/", text)
        now = time.monotonic()
        if m and (m.group(1) != getattr(self, "_rep", None) or now - getattr(self, "_said", 0) >= 30):
            self._rep, self._said = m.group(1), now
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def run(self):
        """Run to the end or the limit: (qemu's exit status or None when killed, seconds)."""
        self.console.write_bytes(b"")
        self.data.write_bytes(b"")
        t0 = time.monotonic()
        log = open(self.console.with_suffix(".qemu.log"), "wb")
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     start_new_session=True)
        pos, pending, killed = 0, b"", False
        with open(self.console, "rb") as f:
            while True:
                rc = self.proc.poll()
                chunk = f.read()
                if chunk:
                    pending += chunk
                    cut = max(pending.rfind(b"\n"), pending.rfind(b"\r"))
                    if cut >= 0:
                        self._relay(pending[:cut + 1].decode("utf-8", "replace"))
                        pending = pending[cut + 1:]
                    pos += len(chunk)
                if rc is not None and not chunk:
                    break
                if time.monotonic() - t0 > self.limit:
                    self.stop()
                    killed = True
                    break
                time.sleep(0.2)
        if pending:
            self._relay(pending.decode("utf-8", "replace") + "\n")
        if self.open_line:
            sys.stderr.write("\n")
        log.close()
        return (None if killed else self.proc.returncode), time.monotonic() - t0

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
