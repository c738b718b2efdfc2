"""Find and read run directories.

A run directory holds meta.json and samples.jsonl (and usually runs.jsonl);
see src/reference/formats.md.  kbench-run compresses a finished run's
samples.jsonl and runs.jsonl (gzip: FILE.gz); either form is read, FILE
when both exist (see run_file).  Reading is deliberately forgiving: a damaged line is
reported (file and line number) and skipped, a damaged run is reported and
left out, and everything else is still read.  Nothing here raises on bad
data except `InputError`, whose message names the file.
"""
import json
import math
import os
import zlib
from pathlib import Path

from .defaults import SUPPORTED_SCHEMA
from . import decl as decl_mod
from . import runcache, workers
from .runs import COUNTER_KEYS, EVENT_KEYS, METRICS, Case, Group, Run  # noqa: F401  (Group: load.Group)

META = "meta.json"
SAMPLES = "samples.jsonl"
RUNS = "runs.jsonl"
GZ = ".gz"

# Bad lines of one file reported one by one before a summary line.
MAX_LINE_WARNINGS = 5


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


# ---------------------------------------------------------------- finding


def run_file(run_dir, name):
    """The path of a run directory's file NAME: NAME when it exists, else
    NAME.gz when that does, else NAME (missing).  kbench-run writes NAME
    and, once the run has ended, compresses it into NAME.gz and then
    removes NAME: when both exist (a crash between the two steps, or a
    --resume making NAME again), they hold the same lines or NAME is the
    one appended to."""
    plain = Path(run_dir) / name
    if plain.is_file():
        return plain
    gz = plain.with_name(name + GZ)
    return gz if gz.is_file() else plain


def _has(run_dir, name):
    return run_file(run_dir, name).is_file()


def is_run_dir(path):
    p = Path(path)
    return (p / META).is_file() and _has(p, SAMPLES)


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
            if p.name in (META, SAMPLES, RUNS, SAMPLES + GZ, RUNS + GZ):
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
    has_samples = _has(top, SAMPLES)
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


def _gz_lines(f, path, warn):
    """The lines of an open gzip file, each with its newline (the last may
    lack it): all its data holds, up to where it is cut off or damaged,
    which is said through `warn` (the lines before it are kept).  zlib
    itself, not the gzip module, whose reader drops the last lines it has
    decompressed when the stream ends early."""
    d = zlib.decompressobj(31)
    rest = b""
    for chunk in iter(lambda: f.read(1 << 16), b""):
        try:
            data = d.decompress(chunk)
            while d.eof and d.unused_data:      # members one after the other (cat a.gz b.gz)
                tail, d = d.unused_data, zlib.decompressobj(31)
                data += d.decompress(tail)
        except zlib.error as e:
            warn(f"{path}: damaged compressed data ({e}); the lines before it are read")
            break
        lines = (rest + data).split(b"\n")
        rest = lines.pop()
        for line in lines:
            yield line + b"\n"
    else:
        if not d.eof:
            warn(f"{path}: the compressed data is cut off; the lines before the cut are read")
    if rest:
        yield rest


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
    gz = str(path).endswith(GZ)
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
        lines = _lines(_gz_lines(f, path, warn) if gz else f, path)
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


def _two_party(obj):
    return obj.get("partner_cpu") is not None or obj.get("placement") in ("same", "cross")


_COUNTER_SET = frozenset(COUNTER_KEYS)

# What scaling.read_run reads of a --copies sample line: kept as it goes by
# (read_samples), so that the file is not read twice.
COPY_KEYS = ("case", "run_id", "rep_idx", "sample_idx", "copies", "copy_idx", "iters", "elapsed_ns", "metric",
             "bytes_per_op")


def _known_identity(obj, identities):
    """case_identity(obj) (a tuple, or an error string), worked out once for
    the lines that name their case alike: `identities` keeps the answers."""
    get = obj.get
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
        if ikey is not None and not isinstance(ident, str):
            identities[ikey] = ident
    return ident


def read_samples(path, run_id, warn, copies=None):
    """Cases of one samples.jsonl: {case name: Case}, and the bad-line count;
    `copies` (a list) gets the COPY_KEYS of every line with a "copies" key.

    Every line gets the checks of case_identity, _sample_value, _disturbed
    and blocked_share (written out here: a full run has over 10 000 lines), and a
    case's identity is worked out once for the lines that name it alike."""
    cases = {}
    counter = {}
    schema_warned = False
    identities = {}     # what case_identity reads of a line -> its answer (the good ones)
    for lineno, obj, bad_line in iter_jsonl(path, warn, counter):
        get = obj.get
        if copies is not None and "copies" in obj:
            copies.append(tuple(get(k) for k in COPY_KEYS))
        schema = get("schema", SUPPORTED_SCHEMA)
        if type(schema) is int and schema > SUPPORTED_SCHEMA and not schema_warned:
            warn(f"{path}:{lineno}: schema {schema} is newer than this script knows "
                 f"({SUPPORTED_SCHEMA}); reading the keys it knows")
            schema_warned = True
        ident = _known_identity(obj, identities)
        if isinstance(ident, str):
            bad_line(lineno, ident)
            continue
        name, bench, variant, params, placement = ident
        rep = get("rep_idx")
        if type(rep) is not int or rep < 0:     # JSON's integers are int, its booleans bool
            bad_line(lineno, f"'rep_idx' is {rep!r}, expected a non-negative integer")
            continue
        metric = get("metric")
        value = get("ns_per_op")
        if metric == "latency" and type(value) is float and 0.0 < value < math.inf:
            pass
        elif (metric == "bandwidth" and type(value) is float and 0.0 < value < math.inf
              and type(b := get("bytes_per_op")) is int and b > 0):
            value = b / value * 1000.0      # _sample_value's MB/s
        else:
            value, err = _sample_value(obj)
            if err:
                bad_line(lineno, err)
                continue
            metric = obj["metric"]
        c = cases.get(name)
        if c is None:
            c = cases[name] = Case(name, bench, variant, params, placement, metric)
            if metric == "bandwidth" and type(b := get("bytes_per_op")) is int and b > 0:
                c.bytes_per_op = b
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
    identities = {}
    for lineno, obj, bad_line in iter_jsonl(path, warn):
        ident = _known_identity(obj, identities)
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
    if isinstance(label, str) and label.strip() and not kernel.endswith(f"[{label.strip()}]"):
        kernel += f"[{label.strip()}]"   # make run LABEL=...: a kernel of its own (the fallback, the
        #                                  directory's name RELEASE[LABEL], has it already)
    run = Run(
        path=path,
        meta=meta,
        run_id=_str_field(meta, "run_id", fb_run),
        host=_str_field(meta, "host", fb_host),
        kernel=kernel,
        status=_str_field(meta, "status", "unknown"),
    )
    run.copy_samples = []
    cases, bad = read_samples(run_file(path, SAMPLES), run.run_id, warn, run.copy_samples)
    run.cases = cases
    run.bad_lines = bad
    run.invocations = read_invocations(run_file(path, RUNS), warn)
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


def _load_one(d):
    """load_run in a worker: (run or None, its warnings, the error or None)."""
    said = []
    try:
        return load_run(d, said.append), said, None
    except InputError as e:
        return None, said, str(e)


def _each(fn, items):
    done = workers.fork_map(fn, items, workers.count(len(items)))
    return done if done is not None else map(fn, items)    # (a fault of load_run then shows here)


def load_runs(paths, warn):
    """Find and read every run under `paths`; damaged runs are reported and
    left out.  Returns a list of Runs (possibly empty), in the order of the
    directories, with the warnings in that order too.  From
    workers.PARALLEL_FROM runs on, worker processes read them (one per
    CPU): the reading is Python's own work and most of a report's time."""
    dirs = list(find_run_dirs(paths, warn))
    runs = []
    done = runcache.read(dirs, _load_one, _each)     # the runs read before: from the cache
    for run, said, err in done:
        for msg in said:
            warn(msg)
        if err is None:
            runs.append(run)
        else:
            warn(f"{err}; run skipped")
    return runs
