"""The lmbench-style summary tables: one row per kernel, one column per
quantity, grouped as lmbench groups them.

A column maps, for each kernel (group), to a `Cell`: one case, or a value
derived per rep from several cases of the same rep (null I/O = mean of
read and write; a context switch = ring time - working-set time).  A
column that a kernel's runs do not have is missing, never zero.

Size-swept quantities use one size for every kernel, chosen from what the
runs have and stated in the column header.  The memory-latency columns
pick, per kernel, the lat_mem_rd sizes that sit inside each cache level
according to meta.cache.
"""
import math
from dataclasses import dataclass, field

from . import stats
from .load import parse_params


@dataclass
class Cell:
    """Where a table cell's value comes from."""
    cases: list                  # load.Case objects, in the order combine expects
    combine: object = None       # f(list of per-case medians) -> value; None = the one case
    desc: str = ""               # e.g. "lat_syscall null" or "(read + write) / 2"
    note: str = ""               # per-kernel remark (e.g. the size used)

    @property
    def key(self):
        return self.desc or self.cases[0].name

    def series(self, estimator=None):
        """The cell's Series: its runs as units (the run level of the model),
        the headline by `estimator` (default: stats.DEFAULT_ESTIMATOR)."""
        if self.combine is None:
            c = self.cases[0]
            return stats.Series.single(c.rep_arrays(), c.metric, c.name, units=c.rep_units(),
                                       estimator=estimator)
        common = set(self.cases[0].reps)
        for c in self.cases[1:]:
            common &= set(c.reps)
        keys = sorted(common, key=lambda k: (str(k[0]), k[1]))
        reps = [tuple(c.reps[k] for c in self.cases) for k in keys]
        return stats.Series(reps, self.combine, self.cases[0].metric, self.key, units=[k[0] for k in keys],
                            estimator=estimator)


@dataclass
class Column:
    label: str
    note: str
    cells: dict = field(default_factory=dict)   # group key -> Cell or None


@dataclass
class Table:
    title: str
    metric: str
    columns: list


def _matching_params(c, bench, variant, want, placement):
    """The parameters of case c if it is bench/variant with samples, the
    placement (when one is required) and every parameter of `want`; else
    None."""
    if c.bench != bench or c.variant != variant or not c.reps:
        return None
    if placement is not None and c.placement != placement:
        return None
    p = parse_params(c.params)
    if any(p.get(k) != v for k, v in want.items()):
        return None
    return p


def find_case(group, bench, variant, params=None, placement=None):
    """The case of `group` with this bench and variant whose params include
    `params` (a dict); placement: required placement or None for any.  The
    candidate with the fewest extra parameters wins."""
    want = {k: str(v) for k, v in (params or {}).items()}
    best = None
    for c in group.cases.values():
        p = _matching_params(c, bench, variant, want, placement)
        if p is None:
            continue
        extra = len(p) - len(want)
        if best is None or (extra, c.name) < best[0]:
            best = ((extra, c.name), c)
    return best[1] if best else None


def param_values(groups, bench, variant, key, params=None, placement=None):
    """Sorted numeric values of parameter `key` over the matching cases of
    all groups."""
    want = {k: str(v) for k, v in (params or {}).items()}
    out = set()
    for g in groups:
        for c in g.cases.values():
            p = _matching_params(c, bench, variant, want, placement)
            if p is None:
                continue
            try:
                out.add(int(p[key]))
            except (KeyError, ValueError):
                pass
    return sorted(out)


def size_text(kb):
    if kb is None:
        return "-"
    if kb >= 1024 and kb % 1024 == 0:
        return f"{kb // 1024} MB"
    return f"{kb} KB"


def _single(bench, variant, params=None, placement=None):
    def resolve(group):
        c = find_case(group, bench, variant, params, placement)
        return Cell([c]) if c is not None else None
    return resolve


def _mean_of(bench, variants, desc):
    def combine(meds):
        return sum(meds) / len(meds)

    def resolve(group):
        cs = [find_case(group, bench, v) for v in variants]
        if any(c is None for c in cs):
            return None
        return Cell(cs, combine, desc)
    return resolve


def _ctx(procs, size_kb):
    def combine(meds):
        return meds[0] - meds[1]

    def resolve(group):
        ring = find_case(group, "lat_ctx", "ring", {"procs": procs, "size_kb": size_kb}, "same")
        work = find_case(group, "lat_ctx", "work", {"procs": procs, "size_kb": size_kb})
        if ring is None or work is None:
            return None
        return Cell([ring, work], combine, f"{ring.name} - {work.name}")
    return resolve


def _two_party(bench, variant, params=None):
    return _single(bench, variant, params, "same")


def _sized(groups, bench, variant, key, params=None, prefer=None):
    """(resolver, size) for a size-swept case at one size for all groups:
    `prefer` if any group has it, else the largest size present."""
    sizes = param_values(groups, bench, variant, key, params)
    if not sizes:
        return (lambda g: None), None
    size = prefer if prefer in sizes else sizes[-1]
    p = dict(params or {})
    p[key] = size
    return _single(bench, variant, p), size


def _cache_sizes(group):
    """{level: size_kb} of the data/unified caches in meta.cache."""
    out = {}
    for c in group.cache_levels():
        t = str(c.get("type", "")).lower()
        lvl, size = c.get("level"), c.get("size_kb")
        if t.startswith("instr") or not isinstance(lvl, int) or not isinstance(size, (int, float)):
            continue
        if size > 0:
            out[lvl] = max(out.get(lvl, 0), size)
    return out


def pick_level_size(sizes, lo, hi):
    """A tested size well inside a cache level of `hi` KB whose next-smaller
    level is `lo` KB (0 for L1): at least 2*lo and at most hi/2 when one
    exists, nearest to the geometric middle; else any size in (lo, hi]."""
    inside = [s for s in sizes if s >= 2 * lo and s <= hi / 2]
    if not inside:
        inside = [s for s in sizes if lo < s <= hi]
    if not inside:
        return None
    if lo <= 0:
        return max(inside)
    mid = math.sqrt(lo * hi)
    return min(inside, key=lambda s: (abs(math.log(s / mid)), s))


def _mem_level(level, stride):
    """The lat_mem_rd stride latency inside cache `level` (1, 2, 3)."""
    def resolve(group):
        caches = _cache_sizes(group)
        if level not in caches:
            return None
        sizes = param_values([group], "lat_mem_rd", "stride", "size_kb", {"stride": stride})
        lo = caches.get(level - 1, 0) if level > 1 else 0
        s = pick_level_size(sizes, lo, caches[level])
        if s is None:
            return None
        c = find_case(group, "lat_mem_rd", "stride", {"size_kb": s, "stride": stride})
        return Cell([c], note=f"{size_text(s)} array; L{level} is {size_text(int(caches[level]))}")
    return resolve


def _mem_main(variant, stride):
    def resolve(group):
        params = {"stride": stride} if variant == "stride" else {}
        sizes = param_values([group], "lat_mem_rd", variant, "size_kb", params)
        if not sizes:
            return None
        s = sizes[-1]
        params["size_kb"] = s
        c = find_case(group, "lat_mem_rd", variant, params)
        caches = _cache_sizes(group)
        note = f"{size_text(s)} array"
        if caches:
            llc = max(caches)
            if s <= 2 * caches[llc]:
                note += f" (not well beyond the {size_text(int(caches[llc]))} L{llc}: partly cached)"
        return Cell([c], note=note)
    return resolve


def build_tables(groups):
    """The summary tables resolved for these groups."""
    def col(label, note, resolve):
        return Column(label, note, {g.key: resolve(g) for g in groups})

    tables = []
    tables.append(Table("Processor and processes", "latency", [
        col("null call", "", _single("lat_syscall", "null")),
        col("null I/O", "(read+write)/2", _mean_of("lat_syscall", ["read", "write"], "(lat_syscall read + lat_syscall write) / 2")),
        col("stat", "", _single("lat_syscall", "stat")),
        col("open/close", "", _single("lat_syscall", "open")),
        col("select", "100 TCP fds", _single("lat_select", "select", {"fds": 100, "type": "tcp"})),
        col("sig inst", "", _single("lat_sig", "install")),
        col("sig hndl", "", _single("lat_sig", "catch")),
        col("fork", "", _single("lat_proc", "fork")),
        col("exec", "", _single("lat_proc", "exec")),
        col("shell", "", _single("lat_proc", "shell")),
    ]))
    tables.append(Table("Context switching", "latency", [
        col(f"{p}p/{s}K", "ring - work, @same", _ctx(p, s))
        for p, s in ((2, 0), (2, 16), (2, 64), (8, 16), (8, 64), (16, 16), (16, 64))
    ]))
    tables.append(Table("Local communication latency", "latency", [
        col("pipe", "@same", _two_party("lat_pipe", "rt")),
        col("AF_UNIX", "@same", _two_party("lat_unix", "rt")),
        col("UDP", "1 B, @same", _two_party("lat_udp", "rt", {"family": "ipv4", "size": 1})),
        col("TCP", "1 B, @same", _two_party("lat_tcp", "rt", {"family": "ipv4", "size": 1})),
        col("TCP conn", "@same", _two_party("lat_connect", "connect", {"family": "ipv4"})),
        col("futex", "threads, @same", _two_party("lat_futex", "thread")),
    ]))
    mmap_r, mmap_s = _sized(groups, "lat_mmap", "mmap", "size_kb", prefer=1024)
    tables.append(Table("File and VM latency", "latency", [
        col("0K create", "fresh dir", _single("lat_fs", "create", {"mode": "fresh", "size_kb": 0})),
        col("0K delete", "fresh dir", _single("lat_fs", "delete", {"mode": "fresh", "size_kb": 0})),
        col("10K create", "fresh dir", _single("lat_fs", "create", {"mode": "fresh", "size_kb": 10})),
        col("10K delete", "fresh dir", _single("lat_fs", "delete", {"mode": "fresh", "size_kb": 10})),
        col("mmap", size_text(mmap_s), mmap_r),
        col("prot fault", "", _single("lat_sig", "prot")),
        col("page fault", "file, per page", _single("lat_pagefault", "file")),
        col("path lookup", "4 names", _single("lat_pathwalk", "positive", {"depth": 4})),
    ]))
    file_r, file_s = _sized(groups, "bw_file_rd", "io_only", "size_kb", prefer=512)
    mmrd_r, mmrd_s = _sized(groups, "bw_mmap_rd", "mmap_only", "size_kb", prefer=file_s or 512)
    mem = {v: _sized(groups, "bw_mem", v, "size_kb") for v in ("bcopy", "cp", "rd", "wr")}
    tables.append(Table("Local communication bandwidth", "bandwidth", [
        col("pipe", "64 KB, @same", _two_party("bw_pipe", "stream", {"chunk_kb": 64})),
        col("AF_UNIX", "64 KB, @same", _two_party("bw_unix", "stream", {"chunk_kb": 64})),
        col("TCP", "64 KB, @same", _two_party("bw_tcp", "stream", {"chunk_kb": 64})),
        col("file reread", size_text(file_s), file_r),
        col("mmap reread", size_text(mmrd_s), mmrd_r),
        col("bcopy (libc)", size_text(mem["bcopy"][1]), mem["bcopy"][0]),
        col("bcopy (hand)", size_text(mem["cp"][1]), mem["cp"][0]),
        col("mem read", size_text(mem["rd"][1]), mem["rd"][0]),
        col("mem write", size_text(mem["wr"][1]), mem["wr"][0]),
    ]))
    strides = param_values(groups, "lat_mem_rd", "stride", "stride")
    stride = 128 if 128 in strides else (strides[0] if strides else 128)
    tables.append(Table("Memory latency", "latency", [
        col("L1", f"stride {stride}", _mem_level(1, stride)),
        col("L2", f"stride {stride}", _mem_level(2, stride)),
        col("L3", f"stride {stride}", _mem_level(3, stride)),
        col("main mem", f"stride {stride}, largest", _mem_main("stride", stride)),
        col("random", "largest", _mem_main("random", None)),
    ]))
    return tables


def column_unit(table, col, values):
    """(unit, divisor) for a column from its values (ns or MB/s)."""
    if table.metric == "bandwidth":
        return "MB/s", 1.0
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return stats.latency_unit(max(vals) if vals else math.nan)
