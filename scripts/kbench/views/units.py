"""Numbers as text: units of latencies, significant digits, percentages,
counters per operation.  The terminal, the CSV's unit column, the page and
the charts all take them from here."""
import math

from ..model import counters


def latency_unit(ns):
    """('ns'|'µs'|'ms', divisor) suited to a latency in ns."""
    if ns is None or math.isnan(ns) or abs(ns) < 1e4:
        return "ns", 1.0
    if abs(ns) < 1e7:
        return "µs", 1e3
    return "ms", 1e6


def unit_for(metric, value):
    if metric == "bandwidth":
        return "MB/s", 1.0
    return latency_unit(value)


def fmt_num(v):
    """A number with about 3-4 significant digits, no exponent."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}".replace(",", "")
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    return f"{v:.3f}"


def fmt_pct(v, digits=1):
    if v is None or math.isnan(v):
        return "-"
    return f"{v:.{digits}f}%"


def column_unit(table, col, values):
    """(unit, divisor) for a column header from its values: ns, µs or ms,
    or for bandwidth "MB/s (10^6 B/s)", the decimal megabyte said in every
    header (lmbench's MB/s is 2^20 bytes/s)."""
    if table.metric == "bandwidth":
        return "MB/s (10^6 B/s)", 1.0
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return latency_unit(max(vals) if vals else math.nan)


# Short names of the counters for the terminal and the page.
COUNTER_LABELS = {
    "instructions": "instr", "cycles": "cycles", "branches": "branches", "branch_misses": "br-miss",
    "cache_references": "cache-ref", "cache_misses": "cache-miss", "l1d_read_misses": "L1d-miss",
    "dtlb_misses": "dTLB-miss", "task_clock_ns": "task-ns", "context_switches": "ctx-sw",
    "cpu_migrations": "migr", "page_faults": "faults", "ipc": "IPC",
}


def counter_fmt(v):
    if v is None or math.isnan(v):
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def counter_table_rows(cases):
    """(headers, rows) for the cases that have counters: one row per case,
    one column per counter present anywhere."""
    vals = [(c, counters.headlines(c)) for c in cases]
    vals = [(c, v) for c, v in vals if v]
    cols = counters.columns([v for _, v in vals])
    headers = ["case"] + [COUNTER_LABELS[k] for k in cols]
    rows = [[c.name] + [counter_fmt(v.get(k)) for k in cols] for c, v in vals]
    return headers, rows


def counter_fmt_change(pct):
    if pct is None or math.isnan(pct):
        return "-"
    if abs(pct) < 0.05:
        return "same"
    return f"{abs(pct):.1f}% {'more' if pct > 0 else 'fewer'}"
