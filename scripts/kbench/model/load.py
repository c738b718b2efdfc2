"""Find and read run directories.

A run directory holds meta.json and samples.jsonl (and usually runs.jsonl);
see README.md.  Reading is deliberately forgiving: a damaged line is
reported (file and line number) and skipped, a damaged run is reported and
left out, and everything else is still read.  Nothing here raises on bad
data except `InputError`, whose message names the file.
"""
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .defaults import SUPPORTED_SCHEMA
from . import decl as decl_mod

META = "meta.json"
SAMPLES = "samples.jsonl"
RUNS = "runs.jsonl"

# Bad lines of one file reported one by one before a summary line.
MAX_LINE_WARNINGS = 5

METRICS = ("latency", "bandwidth")


class InputError(Exception):
    """A problem with an input that makes it unusable; the message names it."""


class Warnings:
    """Collects warnings and passes each one on to `sink` (e.g. stderr)."""

    def __init__(self, sink=None):
        self.messages = []
        self.sink = sink

    def __call__(self, msg):
        self.messages.append(msg)
        if self.sink is not None:
            self.sink(msg)


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


# ---------------------------------------------------------------- finding


def is_run_dir(path):
    p = Path(path)
    return (p / META).is_file() and (p / SAMPLES).is_file()


def find_run_dirs(paths, warn):
    """Every run directory under each path (recursively), in sorted order.

    A path that does not exist or holds no run is reported through `warn`
    and contributes nothing.  Returns a list of Paths without duplicates.
    """
    found = []
    seen = set()
    for given in paths:
        p = Path(given)
        if not p.exists():
            warn(f"{given}: no such file or directory")
            continue
        if p.is_file():
            if p.name in (META, SAMPLES, RUNS):
                p = p.parent
            else:
                warn(f"{given}: not a directory (give a run directory or a directory above runs)")
                continue
        before = len(found)
        for d in _walk(p, warn):
            real = os.path.realpath(d)
            if real not in seen:
                seen.add(real)
                found.append(d)
        if len(found) == before:
            warn(f"{given}: no run directories found (a run directory holds {META} and {SAMPLES})")
    return found


def _walk(top, warn):
    if is_run_dir(top):
        yield top
        return
    has_meta = (top / META).is_file()
    has_samples = (top / SAMPLES).is_file()
    if has_meta != has_samples:
        missing = SAMPLES if has_meta else META
        warn(f"{top}: incomplete run directory (no {missing}); skipped")
        return
    try:
        entries = sorted(top.iterdir(), key=lambda e: decl_mod.natural_key(e.name))
    except OSError as e:
        warn(f"{top}: cannot list directory: {e.strerror or e}")
        return
    for e in entries:
        if e.name.startswith(".") or e.is_symlink() or not e.is_dir():
            continue
        yield from _walk(e, warn)


# ---------------------------------------------------------------- reading


def _read_text(path):
    """Whole file as text; InputError naming the file if unreadable."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte {e.start})") from None


def read_meta(path, warn):
    """meta.json as a dict; InputError when it cannot be used at all."""
    text = _read_text(path)
    if not text.strip():
        raise InputError(f"{path}: empty file")
    try:
        meta = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        lineno = getattr(e, "lineno", None)
        where = f"{path}:{lineno}" if lineno else f"{path}"
        raise InputError(f"{where}: invalid JSON: {getattr(e, 'msg', e)}") from None
    if not isinstance(meta, dict):
        raise InputError(f"{path}: expected a JSON object, found {_json_type(meta)}")
    schema = meta.get("schema")
    if schema is None:
        warn(f"{path}: no 'schema' key; reading it as schema {SUPPORTED_SCHEMA}")
    elif not _is_int(schema):
        warn(f"{path}: 'schema' is {_json_type(schema)}, expected an integer; reading known keys")
    elif schema > SUPPORTED_SCHEMA:
        warn(f"{path}: schema {schema} is newer than this script knows ({SUPPORTED_SCHEMA}); "
             f"reading the keys it knows")
    return meta


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _json_type(v):
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, str):
        return "a string"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return "a number"
    return type(v).__name__


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# One decoder for every line: json.loads with a keyword argument builds a
# new JSONDecoder per call, which took longer than parsing the line.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_NOT_PARSED = object()


def _lines(f, path):
    """The lines of an open file; InputError naming it when reading fails."""
    try:
        yield from f
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None


def iter_jsonl(path, warn, counter=None, wanted=None):
    """Yield (line_number, object, bad_line) for each JSON object line.

    Bad lines are reported through `warn` (file:line: why) and skipped;
    the caller reports lines it rejects itself with bad_line(lineno, why).
    counter["bad"] ends up as the number of bad lines.  wanted: a
    predicate on a line's text (before parsing); the lines it refuses are
    neither parsed nor counted (a reader that needs only some lines).
    """
    if counter is None:
        counter = {}
    counter["bad"] = 0
    try:
        f = open(path, "rb", buffering=1 << 16)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    reported = 0
    scan = _DECODER.scan_once

    def bad_line(lineno, why):
        nonlocal reported
        counter["bad"] += 1
        if reported < MAX_LINE_WARNINGS:
            warn(f"{path}:{lineno}: {why}; line skipped")
            reported += 1

    # Line by line through a buffer: reading a whole file of several MB at
    # once costs more in fresh memory (page faults, in a VM) than the rest.
    with f:
        lines = _lines(f, path)
        for i, raw in enumerate(lines, start=1):
            truncated = not raw.endswith(b"\n")      # only the last line can lack it
            if not truncated:
                raw = raw[:-1]
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                bad_line(i, "not valid UTF-8")
                continue
            if wanted is not None and not wanted(text):
                continue
            # A line that is one JSON value from its first to its last character
            # (the usual case): the decoder's scanner alone.  Anything else (a
            # space around it, an error) goes through json.loads for its message.
            obj = _NOT_PARSED
            try:
                obj, end = scan(text, 0)
            except (StopIteration, ValueError):
                pass
            else:
                if end != len(text):
                    obj = _NOT_PARSED
            if obj is _NOT_PARSED:
                try:
                    obj = json.loads(text, parse_constant=_reject_constant)
                except ValueError as e:
                    if truncated:
                        bad_line(i, "truncated last line (the writer was interrupted?)")
                    else:
                        bad_line(i, f"invalid JSON: {getattr(e, 'msg', e)}")
                    continue
            if not isinstance(obj, dict):
                bad_line(i, f"expected a JSON object, found {_json_type(obj)}")
                continue
            yield i, obj, bad_line
    bad = counter["bad"]
    if bad > reported:
        warn(f"{path}: {bad - reported} more bad lines skipped ({bad} in all)")


def _sample_value(obj):
    """(value, error): ns per op for latency, MB/s for bandwidth."""
    metric = obj.get("metric")
    if metric not in METRICS:
        return None, f"'metric' is {obj.get('metric')!r}, expected 'latency' or 'bandwidth'"
    ns = obj.get("ns_per_op")
    if not _is_num(ns):
        return None, f"'ns_per_op' is {_json_type(ns)}, expected a number"
    if not math.isfinite(ns) or ns <= 0:
        return None, f"'ns_per_op' is {ns!r}, expected a positive finite number"
    if metric == "latency":
        return float(ns), None
    b = obj.get("bytes_per_op")
    if not _is_num(b) or not math.isfinite(b) or b <= 0:
        return None, f"'bytes_per_op' is {b!r}, expected a positive number for a bandwidth case"
    return float(b) / float(ns) * 1000.0, None


def case_identity(obj):
    """(case, bench, variant, params, placement) of a sample or runs line,
    or an error string."""
    bench = obj.get("bench")
    variant = obj.get("variant")
    params = obj.get("params", "")
    placement = obj.get("placement", "")
    case = obj.get("case")
    for k, v in (("bench", bench), ("variant", variant)):
        if not isinstance(v, str) or not v:
            if isinstance(case, str) and case:
                break
            return f"'{k}' is {_json_type(v)}, expected a non-empty string"
    if params is None:
        params = ""
    if placement is None:
        placement = ""
    if not isinstance(params, str):
        return f"'params' is {_json_type(params)}, expected a string"
    if not isinstance(placement, str):
        return f"'placement' is {_json_type(placement)}, expected a string"
    if case is None:
        case = f"{bench} {variant}" + (f" {params}" if params else "")
        if placement in ("same", "cross", "unpinned") and "@" not in case and _two_party(obj):
            case += f" @{placement}"
    if not isinstance(case, str) or not case.strip():
        return f"'case' is {_json_type(case)}, expected a non-empty string"
    if not isinstance(bench, str) or not bench or not isinstance(variant, str) or not variant:
        # Recover bench and variant from the case name.
        words = case.split()
        bench = words[0]
        variant = words[1] if len(words) > 1 and not words[1].startswith("@") else ""
    if not placement and "@" in case:
        placement = case.rsplit("@", 1)[1].strip()
    return case, bench, variant, params, placement


DISTURBED_SHARE = 0.10


def _disturbed(obj):
    """A sample that spent more than 10% of its time runnable but waiting
    (run_delay_ns) or stolen by the hypervisor (steal_ns)."""
    el = obj.get("elapsed_ns")
    if not _is_num(el) or el <= 0:
        return False
    lost = sum(v for v in (obj.get("run_delay_ns"), obj.get("steal_ns")) if _is_num(v) and v > 0)
    return lost > DISTURBED_SHARE * el


def blocked_share(obj):
    """The share of a sample's time its process was blocked: neither on a
    CPU (utime_ns + stime_ns) nor runnable and waiting (run_delay_ns,
    steal_ns), i.e. asleep: I/O, a journal commit, a lock, a partner. None
    without the keys."""
    el, ut, st = obj.get("elapsed_ns"), obj.get("utime_ns"), obj.get("stime_ns")
    if not (_is_num(el) and _is_num(ut) and _is_num(st)) or el <= 0:
        return None
    lost = sum(v for v in (obj.get("run_delay_ns"), obj.get("steal_ns")) if _is_num(v) and v > 0)
    return min(1.0, max(0.0, (el - ut - st - lost) / el))


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


def _two_party(obj):
    return obj.get("partner_cpu") is not None or obj.get("placement") in ("same", "cross")


_COUNTER_SET = frozenset(COUNTER_KEYS)


def read_samples(path, run_id, warn):
    """Cases of one samples.jsonl: {case name: Case}, and the bad-line count.

    Every line gets the checks of case_identity, _sample_value, _disturbed
    and blocked_share (written out here: a full run has over 10 000 lines), and a
    case's identity is worked out once for the lines that name it alike."""
    cases = {}
    counter = {}
    schema_warned = False
    identities = {}     # what case_identity reads of a line -> its answer (the good ones)
    for lineno, obj, bad_line in iter_jsonl(path, warn, counter):
        get = obj.get
        schema = get("schema", SUPPORTED_SCHEMA)
        if type(schema) is int and schema > SUPPORTED_SCHEMA and not schema_warned:
            warn(f"{path}:{lineno}: schema {schema} is newer than this script knows "
                 f"({SUPPORTED_SCHEMA}); reading the keys it knows")
            schema_warned = True
        # Values that compare equal give case_identity the same answer when
        # it accepts them (it reads them as strings or as "not a string").
        ikey = (get("bench"), get("variant"), get("params", ""), get("placement", ""), get("case"),
                get("partner_cpu") is not None)
        try:
            ident = identities.get(ikey)
        except TypeError:       # an array or an object where a string belongs
            ikey, ident = None, None
        if ident is None:
            ident = case_identity(obj)
            if isinstance(ident, str):
                bad_line(lineno, ident)
                continue
            if ikey is not None:
                identities[ikey] = ident
        name, bench, variant, params, placement = ident
        rep = get("rep_idx")
        if type(rep) is not int or rep < 0:     # JSON's integers are int, its booleans bool
            bad_line(lineno, f"'rep_idx' is {rep!r}, expected a non-negative integer")
            continue
        metric = get("metric")
        value = get("ns_per_op")
        if not (metric == "latency" and type(value) is float and 0.0 < value < math.inf):
            value, err = _sample_value(obj)
            if err:
                bad_line(lineno, err)
                continue
            metric = obj["metric"]
        c = cases.get(name)
        if c is None:
            c = cases[name] = Case(name, bench, variant, params, placement, metric)
        elif c.metric != metric:
            bad_line(lineno, f"case {name!r} was {c.metric} on earlier lines, {metric} here")
            continue
        rid = get("run_id")
        if not isinstance(rid, str) or not rid:
            rid = run_id
        key = (rid, rep)
        c.reps.setdefault(key, []).append(value)
        if get("control") is True:
            c.control = True
        el = get("elapsed_ns")
        if (type(el) is int or type(el) is float) and el > 0:
            # _disturbed and blocked_share: the same sums in the same order
            lost = 0
            v = get("run_delay_ns")
            if (type(v) is int or type(v) is float) and v > 0:
                lost = v
            v = get("steal_ns")
            if (type(v) is int or type(v) is float) and v > 0:
                lost = lost + v
            if lost > DISTURBED_SHARE * el:
                c.disturbed.add(key)
            ut, st = get("utime_ns"), get("stime_ns")
            if (type(ut) is int or type(ut) is float) and (type(st) is int or type(st) is float):
                c.blocked.setdefault(key, []).append(min(1.0, max(0.0, (el - ut - st - lost) / el)))
        if "unavailable" in obj.values():
            c.without.update(k for k, v in obj.items() if v == "unavailable")
        t0 = get("t_start_ns")
        if type(t0) is int and t0 >= 0:
            prev = c.rep_start.get(key)
            c.rep_start[key] = t0 if prev is None else min(prev, t0)
        iters = get("iters")
        if type(iters) is int and iters > 0:
            if metric == "latency":
                for k in EVENT_KEYS:
                    v = get(k)
                    if type(v) is int and v > 0:
                        c.per_event.setdefault(k, {}).setdefault(key, []).append(value * iters / v)
            if not _COUNTER_SET.isdisjoint(obj):    # no counters in this sample: the common case
                for k in COUNTER_KEYS:
                    v = get(k)
                    if v is None:
                        continue
                    if _is_num(v) and math.isfinite(v) and v >= 0:
                        c.counters.setdefault(k, {}).setdefault(key, []).append(v / iters)
    return cases, counter["bad"]


def read_invocations(path, warn):
    """runs.jsonl: list of dicts with at least case, rep_idx, status, reason."""
    out = []
    if not Path(path).is_file():
        return out
    for lineno, obj, bad_line in iter_jsonl(path, warn):
        ident = case_identity(obj)
        if isinstance(ident, str):
            bad_line(lineno, ident)
            continue
        status = obj.get("status")
        if not isinstance(status, str) or not status:
            bad_line(lineno, f"'status' is {_json_type(status)}, expected a string")
            continue
        reason = obj.get("reason")
        tail = obj.get("stderr_tail")
        rep = obj.get("rep_idx")
        out.append({
            "case": ident[0],
            "rep_idx": rep if _is_int(rep) else None,
            "status": status,
            "exit_code": obj.get("exit_code") if _is_int(obj.get("exit_code")) else None,
            "signal": obj.get("signal") if _is_int(obj.get("signal")) else None,
            "reason": reason if isinstance(reason, str) else "",
            "stderr_tail": tail if isinstance(tail, str) else "",
            "line": lineno,
        })
    return out


FAILED_STATUSES = ("failed", "timeout", "crashed")


def _drop_failed_reps(run, warn):
    """The samples of an invocation that failed, timed out or crashed never
    count (the driver keeps them in samples.jsonl, raw, with the
    invocation's status in runs.jsonl): its rep is removed from its case."""
    bad = {(inv["case"], inv["rep_idx"]) for inv in run.invocations
           if inv["status"] in FAILED_STATUSES and inv["rep_idx"] is not None}
    dropped = 0
    for (name, rep) in bad:
        c = run.cases.get(name)
        key = (run.run_id, rep)
        if c is None or key not in c.reps:
            continue
        dropped += 1
        del c.reps[key]
        c.disturbed.discard(key)
        c.rep_start.pop(key, None)
        c.blocked.pop(key, None)
        for d in (c.counters, c.per_event):
            for by_rep in d.values():
                by_rep.pop(key, None)
    for name in [n for n, c in run.cases.items() if not c.reps]:
        del run.cases[name]
    if dropped and warn:
        warn(f"{run.path}: the samples of {dropped} rep(s) whose invocation failed, timed out or crashed "
             f"are left out (runs.jsonl has their status)")


def failures(runs):
    """{case name: (status, reason)} of the invocations of these runs that
    failed, timed out or crashed (the first of each case)."""
    out = {}
    for run in runs:
        for inv in run.invocations:
            if inv["status"] in FAILED_STATUSES:
                out.setdefault(inv["case"], (inv["status"], inv["reason"] or inv["stderr_tail"].strip()))
    return out


def _str_field(meta, key, fallback):
    v = meta.get(key)
    if isinstance(v, str) and v.strip():
        return v.strip()
    return fallback


def load_run(path, warn):
    """Read one run directory.  InputError if meta.json is unusable or the
    samples file cannot be read; otherwise a Run (possibly with no cases)."""
    path = Path(path)
    meta = read_meta(path / META, warn)
    # results/<host>/<kernel>/<run-id>/: the path is the fallback identity.
    parts = path.resolve().parts
    fb_run = parts[-1] if parts else str(path)
    fb_kernel = parts[-2] if len(parts) >= 2 else "unknown-kernel"
    fb_host = parts[-3] if len(parts) >= 3 else "unknown-host"
    for key, fb in (("host", fb_host), ("kernel_release", fb_kernel)):
        if not isinstance(meta.get(key), str) or not meta.get(key).strip():
            warn(f"{path / META}: no usable '{key}'; using {fb!r} from the directory name")
    kernel = _str_field(meta, "kernel_release", fb_kernel)
    label = meta.get("label")
    if isinstance(label, str) and label.strip():
        kernel += f"[{label.strip()}]"   # make run LABEL=...: a kernel of its own
    run = Run(
        path=path,
        meta=meta,
        run_id=_str_field(meta, "run_id", fb_run),
        host=_str_field(meta, "host", fb_host),
        kernel=kernel,
        status=_str_field(meta, "status", "unknown"),
    )
    cases, bad = read_samples(path / SAMPLES, run.run_id, warn)
    run.cases = cases
    run.bad_lines = bad
    run.invocations = read_invocations(path / RUNS, warn)
    _drop_failed_reps(run, warn)
    try:
        recorded = decl_mod.read_declarations(path, warn, iter_jsonl)
    except InputError as e:
        warn(f"{e}; the cases' categories and tables fall back to the built-in mapping")
        recorded = None
    for c in cases.values():
        c.declared = decl_mod.resolve(c, recorded)
    if not cases:
        warn(f"{path / SAMPLES}: no usable samples")
    return run


# Runs read at once by worker processes from this many runs on (fewer: one
# process, a worker's start costs more than it saves).  KBENCH_JOBS=1 reads
# them in this process; KBENCH_JOBS=N caps the workers.
PARALLEL_FROM = 4


def _load_one(d):
    """load_run in a worker: (run or None, its warnings, the error or None)."""
    said = []
    try:
        return load_run(d, said.append), said, None
    except InputError as e:
        return None, said, str(e)


def _workers(n_dirs):
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    want = os.environ.get("KBENCH_JOBS", "")
    if want.strip().isdigit() and int(want) > 0:
        cpus = min(cpus, int(want))
    return min(cpus, n_dirs) if n_dirs >= PARALLEL_FROM else 1


def load_runs(paths, warn):
    """Find and read every run under `paths`; damaged runs are reported and
    left out.  Returns a list of Runs (possibly empty), in the order of the
    directories, with the warnings in that order too.  From PARALLEL_FROM
    runs on, worker processes read them (one per CPU): the reading is
    Python's own work and most of a report's time."""
    dirs = list(find_run_dirs(paths, warn))
    done = None
    n = _workers(len(dirs))
    if n > 1:
        try:
            import multiprocessing
            with multiprocessing.get_context("fork").Pool(n) as pool:
                done = pool.map(_load_one, dirs, chunksize=1)
        except Exception:   # no fork, no worker, a result that does not pickle: here, one by one
            done = None     # (a fault of load_run itself then shows here, as without workers)
    if done is None:
        done = map(_load_one, dirs)
    runs = []
    for run, said, err in done:
        for msg in said:
            warn(msg)
        if err is None:
            runs.append(run)
        else:
            warn(f"{err}; run skipped")
    return runs


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


QUICK_NOTE = "kbench-run --quick, as in make quick: a check that the suite runs, not a measurement"


def quick_note(label, n_runs=1):
    """The one-line note printed above the summary or comparison of quick runs."""
    what = "a quick run" if n_runs == 1 else f"{n_runs} quick runs"
    return f"note: {label} is {what} ({QUICK_NOTE})."


def _run_list(runs):
    return ", ".join(f"{r.host}/{r.kernel} {r.run_id} ({r.path})" for r in runs)


# What makes a kernel besides its release (and the user's label): runs of one
# release that differ in any of these are different kernels (a rebuild with
# a patch, another command line).  kernel_config is compared only when every
# run of the release has it (runs recorded before it was kept have not).
IDENTITY_KEYS = ("kernel_version", "kernel_cmdline", "kernel_config")

# Conditions under which runs of one kernel should have been measured alike:
# pooled runs that differ in one of them are pooled, with a loud warning.
CONDITION_KEYS = ("arch", "build_arch", "page_size", "cpu_model", "cpu_count", "mem_total_kb", "governor", "boost", "smt", "thp", "mitigations",
                  "clocksource", "aslr", "virtualization", "virt", "compiler", "cxxflags", "suite_version")


# The compiler options that only choose how much debug information is
# written (-g, -g1, -ggdb3, -gdwarf-5, -gsplit-dwarf...): GCC and clang
# promise that they never change the code generated, so binaries built with
# -g (make's default before) and with -g1 (its default now) measure alike:
# cxxflags are compared without them.
_DEBUG_INFO_FLAG = re.compile(r"-g(?:[0-3]|gdb[0-3]?|dwarf(?:-\d+)?|split-dwarf|z(?:=\S+)?)?")


def condition_value(key, value):
    """A condition's value as runs are compared on it: cxxflags without
    the options that only choose the debug information; any other as it is."""
    if key == "cxxflags" and isinstance(value, str):
        return " ".join(t for t in value.split() if not _DEBUG_INFO_FLAG.fullmatch(t))
    return value


def _identity(run, keys):
    return tuple(json.dumps(run.meta.get(k), sort_keys=True) for k in keys)


def _short_hash(text):
    import hashlib
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def split_identities(runs, warn=None):
    """Give runs of one (host, release, label) that differ in IDENTITY_KEYS
    kernels of their own: "RELEASE~abc123" (a hash of what differs), with a
    warning that names what differs.  Changes run.kernel in place."""
    by_key = {}
    for run in runs:
        by_key.setdefault(run.key, []).append(run)
    for (host, kernel), rs in by_key.items():
        keys = [k for k in IDENTITY_KEYS if k != "kernel_config" or all(r.meta.get(k) for r in rs)]
        ids = {}
        for r in rs:
            ids.setdefault(_identity(r, keys), []).append(r)
        if len(ids) < 2:
            continue
        differ = [k for i, k in enumerate(keys) if len({ident[i] for ident in ids}) > 1]
        names = []
        for ident, members in ids.items():
            name = f"{kernel}~{_short_hash(repr(ident))}"
            names.append(name)
            for r in members:
                r.kernel = name
        if warn:
            warn(f"WARNING: {host}/{kernel}: its runs come from {len(ids)} different kernels "
                 f"(they differ in {', '.join(differ)}): kept apart as {', '.join(sorted(names))}; "
                 f"name them with make run LABEL=... (kbench-run --label)")


def _condition_warnings(group, warn):
    """One warning per group whose runs differ in a condition that should be
    the same for every run of a kernel."""
    if len(group.runs) < 2 or not warn:
        return
    differ = []
    for k in CONDITION_KEYS:
        values = {json.dumps(condition_value(k, r.meta.get(k)), sort_keys=True) for r in group.runs if k in r.meta}
        if len(values) > 1:
            differ.append(f"{k} ({' | '.join(sorted(meta_text(r.meta.get(k)) for r in group.runs if k in r.meta))})")
    if differ:
        warn(f"WARNING: the {len(group.runs)} runs of {group.label} were not measured under the same conditions: "
             + "; ".join(differ) + ". They are pooled; compare them apart with --per-run or their directories.")


COUNTERS_NOTE = ("--counters changes what is measured: the perf counters are inherited by every partner and "
                 "child, which makes fork and every context switch of a counted task dearer (README, "
                 "Counters)")


def counters_warning(sides):
    """sides: [(label, runs)].  A loud warning (a string) when some of these
    runs were made with --counters and others without, naming which; None
    when all were made the same way."""
    with_, without = [], []
    for label, runs in sides:
        n = sum(r.counters is not None for r in runs)
        if n == len(runs):
            with_.append(label)
        elif n == 0:
            without.append(label)
        else:
            with_.append(f"{label} ({n} of its {len(runs)} runs)")
            without.append(f"{label} (the other {len(runs) - n})")
    if not with_ or not without:
        return None
    return (f"WARNING: COUNTERS DIFFER: runs with --counters: {', '.join(with_)}; without: {', '.join(without)}. "
            f"{COUNTERS_NOTE}: a time measured with counters is not comparable with one measured without. "
            f"Compare runs made the same way.")


def emulated_warning(sides):
    """sides: [(label, runs)].  A loud warning (a string) when any of these
    runs was made in an emulated guest (scripts/vm-run without KVM: meta
    virt "emulated"), naming them; None when none was."""
    emulated = []
    for label, runs in sides:
        n = sum(r.meta.get("virt") == "emulated" for r in runs)
        if n:
            emulated.append(label if n == len(runs) else f"{label} ({n} of its {len(runs)} runs)")
    if not emulated:
        return None
    return (f"WARNING: EMULATED: {', '.join(emulated)} ran in a QEMU guest without KVM (meta virt: emulated): "
            f"its timings are 5-30x off and not comparable with native ones; it shows that the cases run "
            f"on that kernel, and compares only with other emulated runs, roughly.")


def group_runs(runs, warn=None):
    """Group runs by (host, kernel) and pool each case's reps.

    A kernel is its release, plus the label of make run LABEL=..., plus
    (split_identities) its version string, command line and config: runs of
    one release that differ there are kept apart, with a warning.  Runs of
    one kernel measured under different conditions are pooled with a
    warning; runs with and without --counters, of one kernel or of
    different kernels, with a loud one (counters_warning).

    Quick runs are never pooled with full runs: a kernel that has both keeps
    its full runs, and the quick ones are named in one warning.  A kernel
    with only quick runs keeps them (Group.quick).
    Returns a list of Groups in natural order of (host, kernel).
    """
    split_identities(runs, warn)
    groups = {}
    for run in runs:
        g = groups.get(run.key)
        if g is None:
            g = groups[run.key] = Group(run.host, run.kernel)
        g.runs.append(run)
    left_out = []
    for g in groups.values():
        if not g.quick and any(r.quick for r in g.runs):
            left_out += [r for r in g.runs if r.quick]
            g.runs = [r for r in g.runs if not r.quick]
    if left_out and warn:
        warn(f"left out {len(left_out)} quick run(s) found among full runs of the same kernel "
             f"({QUICK_NOTE}; never pooled with full runs; give a quick run's directory alone to see it): "
             + _run_list(left_out))
    # First: of everything two runs can differ in, the architecture weighs most.
    w = arch_warning([(g.label, r.meta) for g in groups.values() for r in g.runs])
    if w and warn:
        warn(w)
    for g in groups.values():
        g.cases = pool_cases(g.runs, warn)
        _condition_warnings(g, warn)
    w = counters_warning([(g.label, g.runs) for g in groups.values()])
    if w and warn:
        warn(w)
    w = emulated_warning([(g.label, g.runs) for g in groups.values()])
    if w and warn:
        warn(w)
    return [groups[k] for k in sorted(groups, key=lambda k: (decl_mod.natural_key(k[0]), decl_mod.natural_key(k[1])))]


def drop_quick_groups(groups, warn=None):
    """The groups without the quick-only ones, when there is any full run
    (for the report and the charts, which gather everything under
    results/: make quick never changes them); the groups left out are
    named in one warning.  Only quick runs: all of them, unchanged."""
    full = [g for g in groups if not g.quick]
    if not full or len(full) == len(groups):
        return groups
    quick = [g for g in groups if g.quick]
    if warn:
        warn(f"left out {sum(len(g.runs) for g in quick)} quick run(s) of kernels that have no full run "
             f"({QUICK_NOTE}): " + _run_list([r for g in quick for r in g.runs]))
    return full


def pool_cases(runs, warn=None):
    """Pool the cases of several runs; rep identity is (run_id, rep_idx)."""
    pooled = {}
    for run in runs:
        for name, c in run.cases.items():
            p = pooled.get(name)
            if p is None:
                p = pooled[name] = Case(c.name, c.bench, c.variant, c.params, c.placement, c.metric,
                                        control=c.control, declared=c.declared)
            elif p.metric != c.metric:
                if warn:
                    warn(f"{run.path}: case {name!r} is {c.metric} here but {p.metric} in another run; "
                         f"this run's samples of it are left out")
                continue
            p.without |= c.without
            for k, v in c.reps.items():
                if k in p.reps:
                    if warn:
                        warn(f"{run.path}: rep {k[1]} of run {k[0]} of {name!r} also appears in "
                             f"another directory (a copied run?); counted once")
                    continue
                p.reps[k] = list(v)
                if k in c.rep_start:
                    p.rep_start[k] = c.rep_start[k]
                if k in c.disturbed:
                    p.disturbed.add(k)
                if k in c.blocked:
                    p.blocked[k] = list(c.blocked[k])
                for name_, by_rep in c.counters.items():
                    if k in by_rep:
                        p.counters.setdefault(name_, {})[k] = list(by_rep[k])
                for name_, by_rep in c.per_event.items():
                    if k in by_rep:
                        p.per_event.setdefault(name_, {})[k] = list(by_rep[k])
    return pooled


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


def machine_text(meta):
    """One line for the machine a run was made on: architecture, CPU, CPUs,
    page size, caches (what the summary shows above its tables)."""
    meta = meta or {}
    parts = [arch_of(meta) or "architecture not recorded"]
    built = meta.get("build_arch")
    if isinstance(built, str) and built and built != parts[0]:
        parts[0] += f" (binaries built for {built})"
    parts.append(meta_text(meta.get("cpu_model")) if meta.get("cpu_model") else "CPU model not recorded")
    if meta.get("cpu_count") is not None:
        parts.append(f"{meta_text(meta.get('cpu_count'))} CPUs")
    page = meta.get("page_size")
    if isinstance(page, int) and page > 0:
        parts.append(f"{page // 1024} KB pages" if page % 1024 == 0 else f"{page} B pages")
    elif page is not None:
        parts.append(f"pages {meta_text(page)}")
    cache = meta.get("cache")
    if isinstance(cache, list) and cache and all(isinstance(c, dict) for c in cache):
        parts.append("caches " + _caches_short(cache))
    elif "cache" in meta:
        parts.append("caches not reported" if cache is None else f"caches {meta_text(cache)}")
    return ", ".join(parts)


def _caches_short(cache):
    """'L1d 48K L1i 32K L2 2M L3 ? (64 B lines)': '?' where the size is not reported."""
    def size(kb):
        if not isinstance(kb, int):
            return "?"
        return f"{kb // 1024}M" if kb >= 1024 and kb % 1024 == 0 else f"{kb}K"
    words = []
    for c in cache:
        kind = _cache_kind(c)
        words.append(f"L{c.get('level')}{kind} {size(c.get('size_kb'))}")
    lines = sorted({c.get("line_bytes") for c in cache if isinstance(c.get("line_bytes"), int)})
    return " ".join(words) + (f" ({'/'.join(map(str, lines))} B lines)" if lines else "")


def arch_warning(items):
    """The loud line for runs or sides of more than one architecture, None
    when they share one.  ITEMS: [(label, meta)]."""
    archs = {}
    for label, meta in items:
        labels = archs.setdefault(arch_of(meta) or "not recorded", [])
        if label not in labels:
            labels.append(label)
    if len(archs) < 2:
        return None
    which = "; ".join(f"{a}: {', '.join(labels)}" for a, labels in archs.items())
    return (f"WARNING: DIFFERENT ARCHITECTURES ({which}): another CPU, another build of the kernel and of the "
            f"suite; their figures are not one kernel against another")
