"""What every part of vm-run shares: where the repository is, the program's
name on its messages, and the two errors that end a run (Usage: exit 2;
Failure: its own code, 1 or 3)."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROG = "vm-run"


class Usage(Exception):
    pass


class Failure(Exception):
    def __init__(self, msg, code=1):
        super().__init__(msg)
        self.code = code


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)
