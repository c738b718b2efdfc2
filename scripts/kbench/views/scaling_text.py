"""The words of the scaling cases (N copies at once): summarize's table,
compare's section and the page's section (model/scaling.py computes)."""
import math
import textwrap

from ..model import stats
from ..model.compare import Side
from ..model.scaling import compare_rows, curves, efficiency, machine_bases, summary_rows
from .page import esc, figures
from .text import table
from .units import fmt_num, fmt_pct, unit_for


def rate_text(v, unit):
    if v is None or math.isnan(v):
        return "-"
    if unit == "MB/s":
        return f"{fmt_num(v)} MB/s"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{fmt_num(v / div)} {suffix}ops/s"
    return f"{fmt_num(v)} ops/s"


def per_copy_text(point):
    v = point.per_copy
    if math.isnan(v):
        return "-"
    unit, div = unit_for(point.latency.metric, v)
    return f"{fmt_num(v / div)} {unit}"


def eff_text(e):
    return "-" if e is None or math.isnan(e) else f"{e:.2f}"


HEADING = ("== Scaling: N copies at once (aggregate = the copies' operations per second summed, higher is "
           "better; per copy = each copy's own time per operation; efficiency = aggregate / (N x the 1-copy "
           "aggregate), 1.00 = perfect scaling, less = the copies slow each other down; vs machine = "
           "efficiency / that of the machine's own scaling at N, a case marked (machine): work no kernel can "
           "change)")


def summary_lines(group, estimator=None):
    """The scaling table of summarize ([] without scaling cases)."""
    rows = summary_rows(group, estimator)
    if not rows:
        return []
    cells, last = [], None
    with_machine = any(r[5] for r in rows)   # the column only where the machine's scaling was measured
    for base, p, s, e, rel, machine in rows:
        cells.append([(base + (" (machine)" if machine else "")) if base != last else "", str(p.n),
                      rate_text(s.headline, p.unit), per_copy_text(p), eff_text(e)]
                     + ([eff_text(rel)] if with_machine else [])
                     + [str(s.n_reps), fmt_pct(s.between_cv), stats.mde_text(s.mde)])
        last = base
    heads = (["case", "copies", "aggregate", "per copy", "efficiency"] + (["vs machine"] if with_machine else [])
             + ["reps", "spread", "mde"])
    return ["", textwrap.fill(HEADING, 100), table(heads, cells, right=set(range(1, len(heads))))]


def compare_lines(report, opts):
    """The scaling section of compare for one Report ([] without scaling
    cases on both sides)."""
    rows = compare_rows(report.base, report.other, opts)
    if not rows:
        return []
    cells, last = [], None
    for base, n, pb, po, cmp, eb, eo in rows:
        cells.append([base if base != last else "", str(n), rate_text(cmp.base, pb.unit), rate_text(cmp.other, po.unit),
                      cmp.change_text, cmp.ci_text, cmp.verdict, f"{eff_text(eb)} -> {eff_text(eo)}"])
        last = base
    head = (f"== Scaling, {report.other.label} against {report.base.label}: the aggregate rate at each N "
            "(higher is better; the ratio other/base, its 95% interval and the verdict, adjusted over these "
            "rows), and the scaling efficiency on each side")
    out = ["", textwrap.fill(head, 100),
           table(["case", "copies", "base", "other", "change", "ratio CI", "verdict", "efficiency"], cells,
                 right={1, 2, 3, 4, 5})]
    note = machine_note(report.base, report.other, opts.estimator)
    return out + ([textwrap.fill(note, 100)] if note else [])


def machine_note(base_side, other_side, estimator=None):
    """A sentence on the machine's own scaling on both sides ("" without)."""
    b, o = curves(base_side, estimator), curves(other_side, estimator)
    machines = machine_bases(base_side) | machine_bases(other_side)
    parts = []
    for m in sorted(machines):
        ns = sorted((set(b.get(m, {})) | set(o.get(m, {}))) - {1})
        for n in ns:
            parts.append(f"{m} at {n} copies {eff_text(efficiency(b.get(m, {}), n))} -> "
                         f"{eff_text(efficiency(o.get(m, {}), n))}")
    if not parts:
        return ""
    return ("The machine's own scaling (a control case, work no kernel can change; not judged): "
            + "; ".join(parts) + ".  An efficiency below 1 there is the machine's (CPUs that share cores, a "
            "busy host), not the kernel's.")


def html_section(m, against=None):
    """The page's scaling section: per base case a chart (aggregate against
    copies, a line per kernel and its ideal), a table per kernel, and each
    kernel against the baseline.  [] when no kernel has scaling cases.
    m.scaling, when set, is html_kernels' part, made beforehand (the page
    makes it in a second process while the comparisons are made); against,
    when set, html_against's."""
    kernels = m.scaling if getattr(m, "scaling", None) is not None else html_kernels(m.groups, m.opts.estimator)
    if not kernels:
        return []
    return kernels + (against if against is not None else html_against(m))


def html_kernels(groups, estimator=None):
    """The part of the scaling section that needs the kernels' runs alone:
    the heading, the charts and each kernel's table ([] without scaling
    cases)."""
    per_group = [(g, curves(g, estimator)) for g in groups]
    if not any(cv for _, cv in per_group):
        return []
    out = ["<h2 id='scaling'>Scaling: N copies at once</h2>",
           "<p class='note'>Each scaling case ran N copies of a case at once, copy i on the i-th CPU (a "
           "two-party case's partner on its copy's CPU, for <i>@cross</i> on the next CPU), all released "
           "together.  A case marked <i>(machine)</i> is a control, work no kernel can change: its efficiency "
           "is what N CPUs of this machine give at best, and <i>vs machine</i> divides by it.  Aggregate: the copies' "
           "operations per second summed (higher is better); per copy: each copy's own time per operation; "
           "efficiency: aggregate / (N &times; the 1-copy aggregate), 1.00 = perfect scaling.  In the charts the "
           "dashed line of a kernel is its ideal, N times its 1-copy aggregate.</p>"]
    try:
        from . import plot   # matplotlib: only for the page
        charts = plot.scaling_curves(per_group, None, ("svg",))
    except ImportError:
        charts = {}
    out += figures(charts)
    for g, cv in per_group:
        if not cv:
            continue
        rows = summary_rows(g, estimator)
        with_machine = any(r[5] for r in rows)
        out.append(f"<h3>{esc(g.label)}</h3><table class='scaling'><tr><th>case</th><th>copies</th>"
                   "<th>aggregate</th><th>per copy</th><th>efficiency</th>"
                   + ("<th>vs machine</th>" if with_machine else "") + "<th>reps</th><th>mde</th></tr>")
        for base, p, s, e, rel, machine in rows:
            out.append(f"<tr><td>{esc(base)}{' <i>(machine)</i>' if machine else ''}</td><td class='num'>{p.n}</td>"
                       f"<td class='num'>{esc(rate_text(s.headline, p.unit))}</td><td class='num'>"
                       f"{esc(per_copy_text(p))}</td><td class='num'>{esc(eff_text(e))}</td>"
                       + (f"<td class='num'>{esc(eff_text(rel))}</td>" if with_machine else "")
                       + f"<td class='num'>{s.n_reps}</td><td class='num'>"
                       f"{esc(stats.mde_text(s.mde))}</td></tr>")
        out.append("</table>")
    return out


def html_against(m):
    """The part of the scaling section that compares: each kernel's
    aggregates against the baseline's (compare's statistics, the run level
    of m.opts)."""
    out = []
    base_side = Side.from_group(m.baseline)
    for g in m.groups:
        if g is m.baseline:
            continue
        rows = compare_rows(base_side, Side.from_group(g), m.opts)
        if not rows:
            continue
        out.append(f"<h3>{esc(g.label)} against {esc(m.baseline.label)}</h3><table class='scaling'><tr><th>case</th>"
                   "<th>copies</th><th>change of the aggregate</th><th>ratio CI</th><th>verdict</th>"
                   "<th>efficiency</th></tr>")
        for base, n, pb, po, cmp, eb, eo in rows:
            out.append(f"<tr><td>{esc(base)}</td><td class='num'>{n}</td><td class='num'>{esc(cmp.change_text)}</td>"
                       f"<td class='num'>{esc(cmp.ci_text)}</td><td>{esc(cmp.verdict)}</td>"
                       f"<td class='num'>{esc(eff_text(eb))} &rarr; {esc(eff_text(eo))}</td></tr>")
        out.append("</table>")
        note = machine_note(base_side, Side.from_group(g), m.opts.estimator)
        if note:
            out.append(f"<p class='note'>{esc(note)}</p>")
    return out
