"""Worker processes for the work a report does once per run: reading the
runs (load.load_runs), their estimates (judge.estimate_runs), a second
process beside the page (charts.Background).

The workers are forked: they see what this process holds at the moment of
the fork, so neither the function nor the items are pickled, only each
item's index goes out and its result comes back.  Where there is one CPU,
KBENCH_JOBS=1, or forking fails, the caller does the work itself, one item
after another: the same results either way.
"""
import os
import signal

# Workers from this many items on (fewer: one process, a worker's start costs
# more than it saves).  KBENCH_JOBS=1 keeps the work in this process;
# KBENCH_JOBS=N caps the workers.
PARALLEL_FROM = 4

_TASK = [None]      # fork_map's (fn, items), seen by the forked workers


def count(n_items):
    """How many workers for n_items: one per CPU this process may run on,
    capped by KBENCH_JOBS and by n_items; 1 (no workers) below
    PARALLEL_FROM items."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    want = os.environ.get("KBENCH_JOBS", "")
    if want.strip().isdigit() and int(want) > 0:
        cpus = min(cpus, int(want))
    return min(cpus, n_items) if n_items >= PARALLEL_FROM else 1


def fork_map(fn, items, n):
    """[fn(item) for item in items] by n forked workers, in the items'
    order; None where there are fewer than two workers or the workers
    failed (no fork, an exception in fn, a result that does not pickle):
    the caller then does the work itself, and a fault of fn shows there
    as it would without workers."""
    if n < 2 or not items:
        return None
    try:
        import multiprocessing
        _TASK[0] = (fn, items)      # before the fork: every worker inherits it
        try:
            with multiprocessing.get_context("fork").Pool(n, initializer=_leave_interrupt) as pool:
                return pool.map(_call, range(len(items)), chunksize=1)
        finally:
            _TASK[0] = None
    except Exception:   # noqa: BLE001 -- no fork, no worker, a failing item: the caller's, one by one
        return None


def _leave_interrupt():
    """A worker leaves Ctrl-C to the process that forked it: that one stops
    the pool (its workers end on SIGTERM) and says it was interrupted, so
    no worker prints a traceback of its own."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(i):
    fn, items = _TASK[0]
    return fn(items[i])
