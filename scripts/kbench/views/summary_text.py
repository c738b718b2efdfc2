"""The terminal text and CSV of summarize: per kernel, the summary tables,
every case (--cases), power, the run level, noise, the controls, the
counters and what did not run."""
import csv
import math
import textwrap

from ..model import controls, defaults, load, stats, tables as tables_mod
from ..model.decl import category_of, in_order
from ..model.runs import WAITING_SHARE, dominated_by_waiting, most_waiting
from ..model.summary import problems, summarize_group
from .compare_text import drift_basis, run_level_source
from .machine import machine_text
from .scaling_text import summary_lines as scaling_summary_lines
from .text import table
from .units import counter_table_rows


NOISY_PCT = 25.0   # a spread of the reps above this is marked "!"


WIDTH = 100


def fmt_value(v, metric):
    """A value with about 3 significant figures and its unit beside it:
    "262 ns", "1.07 µs", "13.2 ms", "5.12 GB/s"."""
    if v is None or math.isnan(v):
        return "-"
    if metric == "bandwidth":
        unit, div = ("GB/s", 1e3) if abs(v) >= 1e4 else ("MB/s", 1.0)
    else:
        unit, div = ("ns", 1.0) if abs(v) < 1e3 else ("µs", 1e3) if abs(v) < 1e6 else \
            ("ms", 1e6) if abs(v) < 1e9 else ("s", 1e9)
    x = v / div
    a = abs(x)
    text = f"{x:.0f}" if a >= 100 else f"{x:.1f}" if a >= 10 else f"{x:.2f}"
    return f"{text} {unit}"


def fmt_spread(cv):
    """"±16%" (the CV of the reps), with " !" above NOISY_PCT."""
    if cv is None or math.isnan(cv):
        return "", ""
    return f"±{cv:.0f}%", ("!" if cv > NOISY_PCT else "")


def waiting_note(cases):
    w = most_waiting(cases)
    return (f"dominated by waiting: {w * 100:.0f}% of its time blocked (I/O, journal, locks), "
            f"not a latency (its time: --cases)")


BANDWIDTH_UNITS = "MB/s = 10^6 B/s (lmbench: 2^20)"


def direction_words(metric):
    """A table header's words: the direction, and for bandwidth the units
    (decimal: lmbench's MB/s is binary, 4.9% more bytes)."""
    if metric == "latency":
        return "time per operation, lower is better"
    return f"throughput, higher is better; {BANDWIDTH_UNITS}"


def wrap(text, indent=""):
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def short_names(cases):
    """{case name: shorter name}: the parameters that have one value on every
    case of their bench are dropped (they say nothing), and listed once in
    `notes`. Returns (names, notes)."""
    by_bench = {}
    for c in cases:
        by_bench.setdefault(c.bench, []).append(c)
    names, notes = {}, []
    for bench, cs in by_bench.items():
        values = {}
        for c in cs:
            for k, v in c.param_dict.items():
                values.setdefault(k, set()).add(v)
        constant = {k for k, vs in values.items() if len(vs) == 1 and all(k in c.param_dict for c in cs)}
        if len(cs) < 2:
            constant = set()
        for c in cs:
            keep = ",".join(f"{k}={v}" for k, v in c.param_dict.items() if k not in constant)
            name = " ".join(x for x in (c.bench, c.variant, keep) if x)
            if c.name.rfind(" @") > 0:
                name += c.name[c.name.rfind(" @"):]
            names[c.name] = name
        if constant:
            notes.append(f"{bench}: " + ", ".join(f"{k}={next(iter(values[k]))}" for k in sorted(constant)))
    return names, notes


def row_cells(case, s, name=None):
    spread, mark = fmt_spread(s.between_cv)
    if dominated_by_waiting(case):
        mark += "w"
    return [name or case.name, str(s.n_reps), fmt_value(s.headline, case.metric), spread, mark,
            stats.mde_text(s.mde)]


HEADERS = ["case", "reps", "value", "spread", "", "mde"]


def per_event_rows(case, name, estimator=None):
    """The row of a case's time per event, when its summary column is one
    (per("minflt"): the cost of one page fault, which does not move with how
    many pages a fault maps, where the time per page does): "NAME per
    minflt", beside the case's own row. [] otherwise or without events."""
    summ = (case.decl or {}).get("summary") or {}
    per = summ.get("per")
    if not per or not case.per_event.get(per):
        return []
    series = tables_mod.Cell([case], per=per).series(estimator)
    return [row_cells(case, stats.summarize(series), f"{name} per {per}")]


def _wrap_last(headers, rows):
    """Rows whose last cell is wrapped onto continuation rows so that the
    table fits in WIDTH columns."""
    widths = [max(len(r[i]) for r in rows + [headers]) for i in range(len(headers) - 1)]
    room = max(30, WIDTH - sum(widths) - 2 * len(widths))
    out = []
    for r in rows:
        parts = textwrap.wrap(r[-1], room) or [""]
        out.append(r[:-1] + [parts[0]])
        out += [[""] * (len(r) - 1) + [p] for p in parts[1:]]
    return out


def _summary_tables(group, estimator):
    """Lines of the category tables for one kernel: one row per column of
    each table, the value with its unit, the spread of its reps."""
    out = []
    for t in tables_mod.build_tables([group]):
        rows = []
        for col in t.columns:
            cell = col.cells.get(group.key)
            if cell is None:
                continue
            note = "; ".join(x for x in (col.note, cell.note) if x)
            if any(dominated_by_waiting(c) for c in cell.cases):
                rows.append([col.label, "waiting", "", "", "; ".join(x for x in (note, waiting_note(cell.cases)) if x)])
                continue
            series = cell.series(estimator)
            value = series.headline()
            spread, mark = fmt_spread(stats.cv_percent(series.rep_values()))
            rows.append([col.label, fmt_value(value, t.metric), spread, mark, note])
        if not rows:
            continue
        out.append("")
        out.append(f"== {t.title} ({direction_words(t.metric)})")
        headers = ["", "value", "spread", "", "what"]
        out.append(table(headers, _wrap_last(headers, rows), right={1, 2}))
    return out


def format_group(group, estimator=None, all_cases=False, noise=None):
    """Terminal text for one group (one kernel, its runs pooled): the
    category tables, then (all_cases) every case, the controls, power,
    noise and what did not run."""
    out = []
    runs = group.runs
    title = f"{group.label}: {len(runs)} run{'s' if len(runs) != 1 else ''}"
    if len(runs) == 1:
        title += f" ({runs[0].run_id})"
    out.append(title)
    if len(runs) == 1:
        out.append(f"  {runs[0].path}")
    out.append(wrap("machine: " + machine_text(group.meta), "  "))
    for run in runs:
        if run.status in ("interrupted", "running"):
            out.append(wrap(f"note: run {run.run_id} is marked '{run.status}' in its meta.json: "
                            f"the cases it has are summarised, others may be missing", "  "))
        elif run.status not in ("complete", "unknown"):
            out.append(f"  note: run {run.run_id} has status {run.status!r}")
        if run.bad_lines:
            samples = load.run_file(run.path, load.SAMPLES)
            out.append(f"  note: {run.bad_lines} damaged line(s) of {samples} were skipped")
    rows = summarize_group(group, estimator, noise=noise)
    if not rows:
        out.append("  no usable samples")
    what = ("the 20th percentile of the reps' times (Harrell-Davis; noise only adds time)"
            if (estimator or stats.DEFAULT_ESTIMATOR) == "low" else "the median of the rep medians")
    out.append(wrap(f"value = {what}; spread = how much the reps differ (their CV); ! = a spread above "
                    f"{NOISY_PCT:.0f}%: read that value with care."
                    + ("" if all_cases else " Every case: --cases.")))
    out += _summary_tables(group, estimator)
    out += scaling_summary_lines(group, estimator)  # the copies at once (scaling.py)
    if all_cases and rows:
        names, notes = short_names([c for c, _ in rows])
        out.append("")
        out.append(wrap("Every case. mde = the smallest change a comparison with another run like this "
                        "could detect (95%, power 80%)."))
        if notes:
            out.append(wrap("Same on every case, left out of the names: " + "; ".join(notes) + "."))
        if any(dominated_by_waiting(c) for c, _ in rows):
            out.append(wrap(f"w = blocked (asleep: I/O, a journal commit, a lock) more than "
                            f"{WAITING_SHARE * 100:.0f}% of its time: how long it waited, not a latency."))
        for cat in in_order(category_of(c) for c, _ in rows):
            cells = []
            for c, s in rows:
                if category_of(c) == cat:
                    cells.append(row_cells(c, s, names[c.name]))
                    cells += per_event_rows(c, names[c.name], estimator)
            metrics = {c.metric for c, _ in rows if category_of(c) == cat}
            out.append("")
            out.append(f"== {cat} ({'; '.join(direction_words(m) for m in sorted(metrics, reverse=True))})")
            out.append(table(HEADERS, cells, right={1, 2, 3, 5}))
    live = [s.mde for _, s in rows if not math.isnan(s.mde)]
    if live:
        live.sort()
        out.append("")
        rn = (noise if noise is not None else {}).get(group.host)
        kind, text = run_level_source(rn)
        level = f"Run level ({kind}): {text}."
        plan = ""
        planned = [s for _, s in rows if s.parts]
        if planned:
            meds = [f"{m * 100:.1f}% with {k}" for k, m in stats.planned_medians([s.parts for s in planned], (2, 4, 8))]
            if meds:
                plan = (f" Runs of each kernel at other moments, pooled, would bring the median to "
                        f"{', '.join(meds)} runs a side (if the host drifts {drift_basis(rn)}).")
        out.append(wrap(f"Power: median mde {live[len(live) // 2] * 100:.1f}%; {sum(m <= defaults.DEFAULT_MIN_EFFECT for m in live)} "
                        f"of {len(live)} cases could detect a {defaults.DEFAULT_MIN_EFFECT * 100:g}% change against another run like this one."
                        + plan))
        out.append(wrap(level))
    # One-party cases only: a two-party case on one CPU waits for its
    # partner on the run queue by design.
    solo = [c for c, _ in rows if " @" not in c.name]
    n_reps = sum(c.n_reps for c in solo)
    hit = [(c, len(c.disturbed)) for c in solo if c.disturbed]
    if hit:
        n_hit = sum(k for _, k in hit)
        worst = sorted(hit, key=lambda x: -x[1])[:3]
        out.append(wrap(f"Noise markers: {n_hit} of {n_reps} reps of one-party cases had a sample that spent "
                        f"more than 10% of its time waiting on a run queue or stolen by the hypervisor "
                        f"(run_delay_ns, steal_ns); most in "
                        + ", ".join(f"{c.name} ({k})" for c, k in worst)
                        + ". They are kept; the low estimator leans on the undisturbed reps."))
    ctl = summarize_group(group, estimator, control=True)
    if ctl:
        out.append("")
        out.append("== controls (the machine, not the kernel: never in the tables or in comparisons)")
        out.append(table(HEADERS, [row_cells(c, s) for c, s in ctl], right={1, 2, 3, 5}))
        for run in runs:
            for line in controls.describe(run):
                indent = line[:len(line) - len(line.lstrip())]
                out.append(line if len(line) <= WIDTH else wrap(line.strip(), indent))
    if len(runs) > 1:
        ps = [s.run_p for _, s in rows if not math.isnan(s.run_p)]
        if ps:
            n = int(sum(q < 0.05 for q in stats.bh_adjust(ps)))
            out.append("")
            out.append(wrap(f"Runs pooled: {len(runs)}; {n} of {len(ps)} cases differ between the runs beyond "
                            f"their reps' noise (one-way test, adjusted)" +
                            (": the machine drifted between runs; comparisons treat the run as the unit there."
                             if n else ".")))
    counted = [c for c, _ in rows if c.counters]
    if counted:
        headers, cells = counter_table_rows(counted)
        out.append("")
        out.append(wrap("== counters per operation (median over reps of each rep's median of count/iters; "
                        "IPC = instructions/cycles; a counter this machine lacks is left out)"))
        out.append(table(headers, cells, right=set(range(1, len(headers)))))
    probs = problems(group)
    if probs:
        out.append("")
        out.append("Cases that did not run cleanly:")
        for case, status, reason, reps in probs:
            where = f" (rep {', '.join(str(r) for r in sorted(set(reps)))})" if reps else ""
            out.append(wrap(f"{status:<11} {case}{where}: {reason or 'no reason recorded'}", "  "))
    return "\n".join(out)


CSV_FIELDS = ["host", "kernel", "runs", "category", "case", "bench", "variant", "params", "placement",
              "metric", "unit", "reps", "samples", "headline", "best", "rep_min", "rep_max",
              "between_cv_pct", "within_cv_pct", "median", "mde_pct", "control"]


def write_csv(groups, f, noise=None):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for g in groups:
        for c, s in summarize_group(g, noise=noise) + summarize_group(g, control=True, noise=noise):
            w.writerow({
                "host": g.host, "kernel": g.kernel, "runs": ";".join(r.run_id for r in g.runs),
                "category": category_of(c), "case": c.name, "bench": c.bench, "variant": c.variant,
                "params": c.params, "placement": c.placement, "metric": c.metric,
                "unit": "MB/s" if c.metric == "bandwidth" else "ns", "reps": s.n_reps,
                "samples": s.n_samples, "headline": _num(s.headline), "best": _num(s.best),
                "rep_min": _num(s.rep_min), "rep_max": _num(s.rep_max),
                "between_cv_pct": _num(s.between_cv), "within_cv_pct": _num(s.within_cv),
                "median": _num(s.median), "mde_pct": _num(s.mde * 100 if not math.isnan(s.mde) else math.nan),
                "control": "yes" if c.control else "",
            })


def _num(v):
    return "" if v is None or math.isnan(v) else f"{v:.6g}"
