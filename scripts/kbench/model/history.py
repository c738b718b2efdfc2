"""The run level's evidence: which runs measure how far whole runs of a
host drift.  The compared runs themselves, the other runs kept under their
host directories (results/<host>/<kernel>/<run>) and the directories given
as history; each kernel with two runs or more is one list of replicates
(compare.measure_run_noise)."""
import os
from pathlib import Path

from . import compare, load
from . import groups as groups_mod


class HistoryError(Exception):
    """A history directory that does not exist (compare --history)."""


def host_dirs(runs):
    """results/<host>/ of runs kept in the usual layout (results/<host>/<kernel>/<run>)."""
    out = []
    for r in runs:
        p = Path(r.path).resolve()
        if len(p.parts) >= 3 and p.parent.parent.name == r.host and p.parent.parent not in out:
            out.append(p.parent.parent)
    return out


def run_noise(sides, opts, history=(), no_history=False, warn=None):
    """{host: RunNoise} from the compared sides' own runs, the other runs
    under their host directories (unless no_history) and history
    (compare --history, --no-history).
    Each side is its own list of replicates, even when two sides are runs
    of one kernel; another run of a side's kernel joins that side's list
    when no other side has that kernel, else it is a list of its own."""
    lists = [list(s.runs) for s in sides]
    owner = {}
    for i, s in enumerate(sides):
        for r in s.runs:
            owner.setdefault(r.key, set()).add(i)
    for key, rs in history_by_kernel(lists, history, no_history, warn).items():
        sides_of = owner.get(key, set())
        if len(sides_of) == 1:
            lists[next(iter(sides_of))] += rs
        else:
            lists.append(rs)
    return compare.measure_run_noise(lists, opts)


def measured_run_noise(runs, opts, history=(), no_history=False, warn=None):
    """{host: RunNoise} for summarize: runs (and the history's) grouped by kernel."""
    by_kernel = {}
    for r in runs:
        by_kernel.setdefault(r.key, []).append(r)
    for key, rs in history_by_kernel([runs], history, no_history, warn).items():
        by_kernel.setdefault(key, []).extend(rs)
    return compare.measure_run_noise(list(by_kernel.values()), opts)


def history_by_kernel(lists, history=(), no_history=False, warn=None):
    """{kernel key: [Run]} of the runs under the given runs' host
    directories (unless no_history) and under history, without the
    given runs themselves; HistoryError for a history directory that does
    not exist."""
    given = {(r.host, r.run_id) for rs in lists for r in rs}
    given_paths = {os.path.realpath(r.path) for rs in lists for r in rs}
    dirs = [] if no_history else host_dirs([r for rs in lists for r in rs])
    for d in history:
        p = Path(d)
        if not p.exists():
            raise HistoryError(f"--history {d}: no such directory")
        dirs.append(p)
    if not dirs:
        return {}
    quiet = load.Warnings()   # the history's own warnings are not this comparison's
    # the given runs sit under their host directories too: not read twice
    found = load.find_run_dirs(dirs, quiet)
    others = [d for d in found if os.path.realpath(d) not in given_paths]
    runs = load.load_runs(others, quiet)
    groups_mod.split_identities(runs)
    if history and not runs and len(others) == len(found) and warn:
        warn("--history " + ", ".join(history) + ": no usable run found")
    by_kernel = {}
    for r in runs:
        if (r.host, r.run_id) not in given:
            by_kernel.setdefault(r.key, []).append(r)
    return by_kernel
