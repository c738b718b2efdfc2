"""What a run directory becomes: a run's cases with their reps (Case,
Run), the runs of one kernel (Group), what their meta.json says (merged,
compared, as text), and the reps that waited more than they ran.
load.py reads the files into these."""
import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import decl as decl_mod


METRICS = ("latency", "bandwidth")


# Per-sample perf counters (--counters): totals over one sample; per
# operation = value / iters. A counter the machine lacks is null: skipped.
# rusage counts of a sample: a summary column may divide a latency by one of
# them (e.g. time per page fault), see decl "per"
EVENT_KEYS = ("minflt", "majflt", "nvcsw", "nivcsw")


COUNTER_KEYS = ("instructions", "cycles", "branches", "branch_misses", "cache_references",
                "cache_misses", "l1d_read_misses", "dtlb_misses", "task_clock_ns",
                "context_switches", "cpu_migrations", "page_faults")


@dataclass
class Case:
    """All samples of one case, keyed by rep: (run_id, rep_idx) -> values.

    values are ns per op for latency, MB/s for bandwidth. counters: counter
    name -> {rep key -> [count per operation, one per sample]}.
    """
    name: str
    bench: str
    variant: str
    params: str
    placement: str
    metric: str
    reps: dict = field(default_factory=dict)
    counters: dict = field(default_factory=dict)
    control: bool = False       # a control case: measures the machine, not the kernel
    disturbed: set = field(default_factory=set)     # rep keys with a sample >10% waiting or stolen
    rep_start: dict = field(default_factory=dict)   # rep key -> first t_start_ns (CLOCK_MONOTONIC)
    without: set = field(default_factory=set)       # optional kernel features it ran without ("thp": "unavailable")
    declared: dict = None       # the binary's declaration (decl.resolve); None = not read yet
    per_event: dict = field(default_factory=dict)   # EVENT_KEYS name -> {rep key -> [ns per event]}
    blocked: dict = field(default_factory=dict)     # rep key -> [share of each sample's time blocked]
    bytes_per_op: int = 0       # a bandwidth case's bytes per operation (its first sample's; 0: unknown)

    @property
    def decl(self):
        """Category, ranks, direction, summary column and curve (see decl)."""
        if self.declared is None:
            self.declared = decl_mod.resolve(self, None)
        return self.declared

    @property
    def category(self):
        return self.decl["category"]

    @property
    def param_dict(self):
        return parse_params(self.params)

    @property
    def n_reps(self):
        return len(self.reps)

    @property
    def n_samples(self):
        return sum(len(v) for v in self.reps.values())

    def rep_arrays(self):
        """Per-rep sample arrays in a stable order of rep keys."""
        return [np.asarray(self.reps[k], dtype=float) for k in sorted(self.reps, key=_rep_sort_key)]

    def rep_keys(self):
        return sorted(self.reps, key=_rep_sort_key)

    def rep_units(self):
        """The run of each rep, in rep_arrays() order."""
        return [k[0] for k in self.rep_keys()]


def _rep_sort_key(k):
    return (str(k[0]), k[1])


@dataclass
class Run:
    path: Path
    meta: dict
    run_id: str
    host: str
    kernel: str
    status: str
    cases: dict = field(default_factory=dict)
    invocations: list = field(default_factory=list)
    bad_lines: int = 0
    # The sample lines with a "copies" key (--copies), as tuples of
    # load.COPY_KEYS' values, for scaling.read_run; None: not read with them.
    copy_samples: list = None

    @property
    def key(self):
        return (self.host, self.kernel)

    @property
    def quick(self):
        """Made by `make quick` (kbench-run --quick): a check, not a measurement."""
        return is_quick(self.meta)

    @property
    def n_samples(self):
        return sum(c.n_samples for c in self.cases.values())

    @property
    def counters(self):
        """The --counters the run was made with: None without, else the list
        ("all" for every counter).  From meta.options.counters; a run whose
        meta does not say has counters when a sample counted one."""
        opts = self.meta.get("options")
        if isinstance(opts, dict) and "counters" in opts:
            v = opts["counters"]
            return None if v is None else (str(v) or "all")
        return "from the samples" if any(c.counters for c in self.cases.values()) else None


@dataclass
class Group:
    """All runs of one (host, kernel), their reps pooled per case."""
    host: str
    kernel: str
    runs: list = field(default_factory=list)
    cases: dict = field(default_factory=dict)

    @property
    def key(self):
        return (self.host, self.kernel)

    @property
    def label(self):
        return f"{self.host}/{self.kernel}"

    @property
    def quick(self):
        """Only quick runs (group_runs never mixes them with full runs)."""
        return bool(self.runs) and all(r.quick for r in self.runs)

    @property
    def meta(self):
        return merged_meta([r.meta for r in self.runs])

    def cache_levels(self):
        """meta.cache of the first run that has one (list of dicts)."""
        for r in self.runs:
            c = r.meta.get("cache")
            if isinstance(c, list):
                return [x for x in c if isinstance(x, dict)]
        return []


def parse_params(params):
    """'a=1,b=x' -> {'a': '1', 'b': 'x'}; tolerant of empty strings."""
    out = {}
    if not params:
        return out
    for part in str(params).split(","):
        if not part:
            continue
        k, sep, v = part.partition("=")
        out[k.strip()] = v.strip() if sep else ""
    return out


WAITING_SHARE = 0.5   # a one-party case blocked more than this share of its time is "waiting"


def waiting_share(case):
    """How much of its time a one-party latency case spent blocked (asleep:
    I/O, a journal commit, a lock): the median over reps of each rep's
    median share (load.blocked_share). None for two-party cases (they wait
    for their partner by design), bandwidth cases and samples without the
    CPU times."""
    if case.metric != "latency" or case.name.rfind(" @") > 0 or not case.blocked:
        return None
    meds = [statistics.median(v) for v in case.blocked.values() if v]
    return statistics.median(meds) if meds else None


def dominated_by_waiting(case):
    """More than WAITING_SHARE of its time blocked: its number is how long
    something made it wait (the disk, a journal commit), not the cost of
    the operation's path, and is not quoted as a latency."""
    w = waiting_share(case)
    return w is not None and w > WAITING_SHARE


def most_waiting(cases):
    """The largest blocked share among the (non-control) cases dominated by
    waiting, None if none is (None entries are skipped): a summary cell's
    cases, or one case on each side of a comparison."""
    shares = [waiting_share(c) for c in cases if c is not None and not c.control and dominated_by_waiting(c)]
    return max(shares) if shares else None


def is_quick(meta):
    """Whether meta.json is that of a quick run (kbench-run --quick, make
    quick): its "quick" key; for runs recorded before that key, the
    "options" object's "quick", which kbench-run has recorded since its
    first version.  A run with neither (made by hand or by another tool)
    counts as a full run."""
    q = meta.get("quick")
    if isinstance(q, bool):
        return q
    opts = meta.get("options")
    if isinstance(opts, dict) and isinstance(opts.get("quick"), bool):
        return opts["quick"]
    return False


# The compiler options that only choose how much debug information is
# written (-g, -g1, -ggdb3, -gdwarf-5, -gsplit-dwarf...): GCC and clang
# promise that they never change the code generated, so binaries built with
# -g (make's default before) and with -g1 (its default now) measure alike:
# cxxflags are compared without them.
_DEBUG_INFO_FLAG = re.compile(r"-g(?:[0-3]|gdb[0-3]?|dwarf(?:-\d+)?|split-dwarf|z(?:=\S+)?)?")


# A campaign's marker on each test boot's command line (kbench.campaign=ID:STEP:TRY,
# src/driver/campaign.cpp) proves which boot a run came from; it differs from boot to
# boot of one kernel and says nothing of the kernel.
_CAMPAIGN_MARKER = "kbench.campaign="


def condition_value(key, value):
    """A condition's value as runs are compared on it: cxxflags without
    the options that only choose the debug information, the kernel's
    command line without a campaign's boot marker; any other as it is."""
    if key == "cxxflags" and isinstance(value, str):
        return " ".join(t for t in value.split() if not _DEBUG_INFO_FLAG.fullmatch(t))
    if key == "kernel_cmdline" and isinstance(value, str):
        return " ".join(t for t in value.split() if not t.startswith(_CAMPAIGN_MARKER))
    return value


def merged_meta(metas):
    """One dict: a key's value where all runs agree, else the distinct values
    joined by ' | ' (as text).  An object (options, mitigations) is merged
    key by key: runs that differ in options.seed and options.out still
    agree on options.samples, which a comparison checks."""
    keys = []
    for m in metas:
        for k in m:
            if k not in keys:
                keys.append(k)
    out = {}
    for k in keys:
        vals = [m.get(k) for m in metas]
        if any(isinstance(v, dict) for v in vals) and all(v is None or isinstance(v, dict) for v in vals):
            out[k] = merged_meta([v or {} for v in vals])      # a run without it: '-' in each subkey
            continue
        distinct, seen = [], []
        for v in vals:
            if condition_value(k, v) not in seen:     # -g against -g1: one value (the first run's)
                seen.append(condition_value(k, v))
                distinct.append(v)
        out[k] = distinct[0] if len(distinct) == 1 else " | ".join(meta_text(v) for v in distinct)
    return out


def meta_text(v):
    """A meta value as one line of text."""
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {meta_text(x)}" for k, x in v.items())
    if isinstance(v, list):
        if v and all(isinstance(x, dict) and "level" in x and "size_kb" in x for x in v):
            return "; ".join(_cache_text(x) for x in v)  # meta.cache
        return ", ".join(meta_text(x) for x in v)
    return json.dumps(v)


def _cache_kind(c):
    """'d', 'i' or '' (unified) for a cache entry of meta.json."""
    return {"data": "d", "instruction": "i"}.get(str(c.get("type", "")).lower(), "")


def _cache_text(c):
    kind = _cache_kind(c)
    line = f", {c['line_bytes']} B lines" if c.get("line_bytes") else ""
    # arm64 without the firmware's cache description (a QEMU guest): levels, no sizes
    size = f"{meta_text(c['size_kb'])} KB" if c.get("size_kb") is not None else "size not reported"
    return f"L{c.get('level')}{kind} {size}{line}"


def arch_of(meta):
    """The machine's architecture a run was made on ("x86_64", "aarch64"),
    None when meta.json does not say."""
    a = (meta or {}).get("arch")
    return a if isinstance(a, str) and a else None
