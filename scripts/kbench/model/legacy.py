"""Declarations for runs recorded before the binaries declared their cases.

Since the declaration change, each benchmark binary states its category,
order, summary-table column and curve in `--list`, and the driver records
those lines in the run directory (cases.jsonl).  Older run directories have
no cases.jsonl: this module is the one place that knows, for them, what the
binaries of that time would have declared.  It is never consulted for a run
that has its own declarations, and a test checks that it agrees with the
current binaries' `--list`, so the two stay one mapping.

Nothing else in scripts/kbench names a benchmark.
"""

# category -> rank (the order of tables and report sections)
_CATEGORY_RANK = {
    "Processor and processes": 10,
    "Context switching": 20,
    "Local communication latency": 30,
    "File and VM latency": 40,
    "Local communication bandwidth": 50,
    "Memory latency": 60,
    "Machine controls": 90,
    "Other": 1000,
}

# bench -> (category, bench rank, variants in declaration order)
_BENCHES = {
    "lat_syscall": ("Processor and processes", 1, ["null", "read", "write", "stat", "fstat", "open"]),
    "lat_sig": ("Processor and processes", 2, ["install", "catch", "prot"]),
    "lat_proc": ("Processor and processes", 3, ["fork", "exec", "shell"]),
    "lat_select": ("Processor and processes", 4, ["select", "poll", "epoll"]),
    "lat_ctx": ("Context switching", 5, ["ring", "work"]),
    "lat_pipe": ("Local communication latency", 6, ["rt"]),
    "lat_unix": ("Local communication latency", 7, ["rt"]),
    "lat_udp": ("Local communication latency", 8, ["rt"]),
    "lat_tcp": ("Local communication latency", 9, ["rt"]),
    "lat_connect": ("Local communication latency", 10, ["connect"]),
    "lat_futex": ("Local communication latency", 11, ["thread", "process"]),
    "lat_fs": ("File and VM latency", 12, ["create", "delete"]),
    "lat_pathwalk": ("File and VM latency", 13, ["positive", "negative"]),
    "lat_mmap": ("File and VM latency", 14, ["mmap"]),
    "lat_pagefault": ("File and VM latency", 15, ["file", "anon"]),
    "bw_pipe": ("Local communication bandwidth", 16, ["stream"]),
    "bw_unix": ("Local communication bandwidth", 17, ["stream"]),
    "bw_tcp": ("Local communication bandwidth", 18, ["stream"]),
    "bw_file_rd": ("Local communication bandwidth", 19, ["io_only", "open2close"]),
    "bw_mmap_rd": ("Local communication bandwidth", 20, ["mmap_only", "open2close"]),
    "bw_mem": ("Local communication bandwidth", 21, ["rd", "wr", "rdwr", "cp", "bcopy", "bzero"]),
    "lat_mem_rd": ("Memory latency", 22, ["stride", "random"]),
    "ctl_machine": ("Machine controls", 90, ["chain", "alu", "copy"]),
    "lat_harness": ("Other", 999, ["empty", "clock"]),
}

# (bench, variant) -> the category when it differs from the bench's
_VARIANT_CATEGORY = {("lat_sig", "prot"): "File and VM latency"}


def _col(column, order, note="", combine="one", placement=None, minus=None, size_param=None, prefer=None,
         per=None):
    return {"column": column, "note": note, "order": order, "combine": combine, "placement": placement,
            "minus": minus, "size_param": size_param, "prefer": prefer, "per": per}


# (bench, variant, required params) -> summary column; the first match wins
_SUMMARY = [
    ("lat_syscall", "null", {}, _col("null call", 1)),
    ("lat_syscall", "read", {}, _col("null I/O", 2, "(read+write)/2", "mean")),
    ("lat_syscall", "write", {}, _col("null I/O", 2, "(read+write)/2", "mean")),
    ("lat_syscall", "stat", {}, _col("stat", 3)),
    ("lat_syscall", "open", {}, _col("open/close", 4)),
    ("lat_select", "select", {"fds": "100", "type": "tcp"}, _col("select", 5, "100 TCP fds")),
    ("lat_sig", "install", {}, _col("sig inst", 6)),
    ("lat_sig", "catch", {}, _col("sig hndl", 7)),
    ("lat_proc", "fork", {}, _col("fork", 8, "parent: the harness process")),
    ("lat_proc", "exec", {}, _col("exec", 9)),
    ("lat_proc", "shell", {}, _col("shell", 10)),
] + [
    ("lat_ctx", "ring", {"procs": str(p), "size_kb": str(s)},
     _col(f"{p}p/{s}K", i + 1, "ring - work, @same", "minus", "same", "work"))
    for i, (p, s) in enumerate(((2, 0), (2, 16), (2, 64), (8, 16), (8, 64), (16, 16), (16, 64)))
] + [
    ("lat_pipe", "rt", {}, _col("pipe", 1, "@same", placement="same")),
    ("lat_unix", "rt", {}, _col("AF_UNIX", 2, "@same", placement="same")),
    ("lat_udp", "rt", {"family": "ipv4", "size": "1"}, _col("UDP", 3, "1 B, @same", placement="same")),
    ("lat_tcp", "rt", {"family": "ipv4", "size": "1"}, _col("TCP", 4, "1 B, @same", placement="same")),
    ("lat_connect", "connect", {"family": "ipv4"}, _col("TCP conn", 5, "@same", placement="same")),
    ("lat_futex", "thread", {}, _col("futex", 6, "threads, @same", placement="same")),
    ("lat_fs", "create", {"mode": "fresh", "size_kb": "0"}, _col("0K create", 1, "fresh dir")),
    ("lat_fs", "delete", {"mode": "fresh", "size_kb": "0"}, _col("0K delete", 2, "fresh dir")),
    ("lat_fs", "create", {"mode": "fresh", "size_kb": "10"}, _col("10K create", 3, "fresh dir")),
    ("lat_fs", "delete", {"mode": "fresh", "size_kb": "10"}, _col("10K delete", 4, "fresh dir")),
    ("lat_mmap", "mmap", {}, _col("mmap", 5, combine="pick", size_param="size_kb", prefer=1024)),
    ("lat_sig", "prot", {}, _col("prot fault", 6)),
    ("lat_pagefault", "file", {}, _col("page fault", 7, "file, per fault", per="minflt")),
    ("lat_pathwalk", "positive", {"depth": "4"}, _col("path lookup", 8, "4 names")),
    ("bw_pipe", "stream", {"chunk_kb": "64"}, _col("pipe", 1, "64 KB, @same", placement="same")),
    ("bw_unix", "stream", {"chunk_kb": "64"}, _col("AF_UNIX", 2, "64 KB, @same", placement="same")),
    ("bw_tcp", "stream", {"chunk_kb": "64"}, _col("TCP", 3, "64 KB, @same", placement="same")),
    ("bw_file_rd", "io_only", {}, _col("file reread", 4, combine="pick", size_param="size_kb", prefer=512)),
    ("bw_mmap_rd", "mmap_only", {}, _col("mmap reread", 5, combine="pick", size_param="size_kb", prefer=512)),
    ("bw_mem", "bcopy", {}, _col("bcopy (libc)", 6, combine="pick", size_param="size_kb")),
    ("bw_mem", "cp", {}, _col("bcopy (hand)", 7, combine="pick", size_param="size_kb")),
    ("bw_mem", "rd", {}, _col("mem read", 8, combine="pick", size_param="size_kb")),
    ("bw_mem", "wr", {}, _col("mem write", 9, combine="pick", size_param="size_kb")),
    ("lat_mem_rd", "random", {}, _col("L", 1, "random chain", "cache_levels", size_param="size_kb")),
    ("lat_mem_rd", "stride", {"stride": "128"}, _col("sequential", 5, "stride 128, largest", "largest",
                                                     size_param="size_kb")),
]


def _curve(chart, title, panel="", log_y=False, cache_lines=False):
    return {"chart": chart, "title": title, "panel": panel, "x": "size_kb", "log_y": log_y,
            "cache_lines": cache_lines}


def _curve_of(bench, variant, params):
    if bench == "lat_mem_rd" and (variant == "random" or params.get("stride") in ("64", "128")):
        return _curve("mem_latency", "Dependent-load latency against array size (lat_mem_rd)",
                      log_y=True, cache_lines=True)
    if bench == "bw_mem":
        return _curve("mem_bandwidth", "Memory bandwidth against size (bw_mem)", panel=variant)
    if bench in ("bw_file_rd", "bw_mmap_rd"):
        return _curve("file_reread", "Reading a cached file: read() and mmap against file size")
    return None


# The memory-bound benches of runs whose cases.jsonl predates the "domain"
# key (kbench 0.2.0 and older): their cost follows the memory system.
MEMORY_BENCHES = ("bw_mem", "lat_mem_rd", "bw_file_rd", "bw_mmap_rd")


# The file-system-bound benches (bench.hpp fs_bound()): runs from before
# that domain declared them cpu, or nothing.
FS_BENCHES = ("lat_fs",)

# Cases declared memory-bound since (bench, variant): runs from before
# declared them cpu, read as what the binaries declare now.
NOW_MEMORY = (("lat_proc", "fork_mem"),)


def domain(bench, variant=""):
    """The domain the binaries declare now for a case (cpu, memory or fs),
    for runs whose cases.jsonl does not say or says cpu from before
    (tests/bench/test_smoke.py holds every binary's declaration to it)."""
    if bench in FS_BENCHES:
        return "fs"
    return "memory" if bench in MEMORY_BENCHES or (bench, variant) in (("ctl_machine", "mem"), ("ctl_machine", "llc"),
                                                                      *NOW_MEMORY) else "cpu"


def declaration(bench, variant, params, metric):
    """What the binaries of the time declared for this case (a dict with the
    keys of a `--list` declaration); unknown benches land in "Other"."""
    category, bench_rank, variants = _BENCHES.get(bench, ("Other", 999, []))
    category = _VARIANT_CATEGORY.get((bench, variant), category)
    index = variants.index(variant) if variant in variants else len(variants)
    summary = None
    for b, v, want, col in _SUMMARY:
        if b == bench and v == variant and all(params.get(k) == x for k, x in want.items()):
            summary = dict(col)
            break
    return {
        "category": category,
        "category_rank": _CATEGORY_RANK[category],
        "rank": bench_rank * 1000 + index,
        "direction": "higher" if metric == "bandwidth" else "lower",
        "unit": "MB/s" if metric == "bandwidth" else "ns",
        "summary": summary,
        "curve": _curve_of(bench, variant, params),
        "domain": domain(bench, variant),
    }
