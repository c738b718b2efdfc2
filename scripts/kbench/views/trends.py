"""The page's series sections (report --series): where each case changed,
and a small-multiples grid of trend charts, one per summary-table cell:
its value and interval on each kernel in series order, the steps judged
faster or slower marked.  Also the table of a bisection's steps (report
--bisect LOG, written by scripts/bisect-step).  Inline SVG, no matplotlib:
a few hundred small charts in well under a second."""
import json
import math

from ..model import series as series_mod, stats
from . import series_text
from .page import cmp_title, esc, speed_words, verdict_class
from .strips import _ticks
from .units import column_unit, fmt_num

W, H = 230, 130
LEFT, RIGHT, TOP, BOTTOM = 44, 8, 18, 24
SLOWER_COLOUR, FASTER_COLOUR, FAILED_COLOUR = "#f2711c", "#2b7bba", "#7f2704"


def cell_key(table, col, cell):
    """The key a cell's comparison and bootstrap go by (as compare_tables)."""
    if cell.combine is None and not cell.per:
        return cell.cases[0].name
    return f"cell:{table.title}:{col.label}"


def _fmt(v):
    return "—" if v is None or math.isnan(v) else fmt_num(v)


def trend_svg(title, metric, unit, div, points, labels):
    """One chart: points = [(value, low, high, step Comparison or None)] per
    kernel in series order; labels = the kernels' labels."""
    vals = [(v, lo, hi) for v, lo, hi, _ in points if not math.isnan(v)]
    if not vals:
        return ""
    vmin, vmax = min(v for v, _, _ in vals), max(v for v, _, _ in vals)
    # the intervals, but never so wide that the values flatten into a line
    lo_ax = min([vmin] + [lo for _, lo, _ in vals if not math.isnan(lo) and lo > vmin / 2])
    hi_ax = max([vmax] + [hi for _, _, hi in vals if not math.isnan(hi) and hi < vmax * 2])
    pad = (hi_ax - lo_ax) * 0.08 or abs(vmax) * 0.05 or 1.0
    lo_ax, hi_ax = (lo_ax - pad) / div, (hi_ax + pad) / div
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    n = len(points)

    def x(i):
        return LEFT + (pw * (i + 0.5) / n)

    def y(v):
        v = min(max(v / div, lo_ax), hi_ax)
        return TOP + ph * (hi_ax - v) / (hi_ax - lo_ax)

    out = [f"<svg class='trend' width='{W}' height='{H}' viewBox='0 0 {W} {H}' role='img' "
           f"aria-label='{esc(title)} per kernel'><title>{esc(title)}</title>",
           f"<text x='{W / 2:.0f}' y='12' text-anchor='middle' class='t'>{esc(title)}</text>"]
    for t in axis_ticks(lo_ax, hi_ax):
        yy = TOP + ph * (hi_ax - t) / (hi_ax - lo_ax)
        out.append(f"<line x1='{LEFT}' x2='{W - RIGHT}' y1='{yy:.1f}' y2='{yy:.1f}' class='g'/>"
                   f"<text x='{LEFT - 3}' y='{yy + 3:.1f}' text-anchor='end'>{fmt_num(t)}</text>")
    out.append(f"<text x='{LEFT}' y='{H - 4}' class='m'>{esc(unit)}, {esc(stats.direction_text(metric))}</text>")
    line = []
    for i, (v, lo, hi, step) in enumerate(points):
        if math.isnan(v):
            continue
        line.append(f"{'M' if not line else 'L'}{x(i):.1f} {y(v):.1f}")
    out.append(f"<path d='{''.join(line)}' class='l'/>")
    for i, (v, lo, hi, step) in enumerate(points):
        if math.isnan(v):
            out.append(f"<text x='{x(i):.1f}' y='{TOP + ph / 2:.0f}' text-anchor='middle' class='m'>×</text>")
            continue
        if not (math.isnan(lo) or math.isnan(hi)):
            out.append(f"<line x1='{x(i):.1f}' x2='{x(i):.1f}' y1='{y(hi):.1f}' y2='{y(lo):.1f}' class='ci'/>")
        tip = f"{labels[i]}: {_fmt(v / div)} {unit}" + (
            f" ({_fmt(lo / div)}..{_fmt(hi / div)})" if not (math.isnan(lo) or math.isnan(hi)) else "")
        colour = None
        if step is not None and step.verdict == stats.NOT_JUDGED:
            tip += f"; from {labels[i - 1]}: not judged, {step.not_judged}"
        if step is not None and (step.significant or step.verdict == stats.FAILED):
            colour = FAILED_COLOUR if step.verdict == stats.FAILED else \
                SLOWER_COLOUR if step.verdict == stats.SLOWER else FASTER_COLOUR
            tip += f"; from {labels[i - 1]}: {speed_words(step.ratio, step.metric)[0] or step.verdict} " \
                   f"(ratio {step.ratio:.3f}, {step.ci_text})"
            out.append(f"<line x1='{(x(i - 1) + x(i)) / 2:.1f}' x2='{(x(i - 1) + x(i)) / 2:.1f}' y1='{TOP}' "
                       f"y2='{TOP + ph}' stroke='{colour}' class='st'/>")
        out.append(f"<circle cx='{x(i):.1f}' cy='{y(v):.1f}' r='{3.2 if colour else 2.2}' "
                   f"fill='{colour or '#333'}'><title>{esc(tip)}</title></circle>")
    # the kernels by their number in the key above the charts (a name would not fit under each point)
    for i in x_labelled(n):
        out.append(f"<text x='{x(i):.1f}' y='{TOP + ph + 11}' text-anchor='middle' class='m'>{i + 1}</text>")
    out.append("</svg>")
    return "".join(out)


def axis_ticks(lo, hi):
    """Round values for the y axis, two at least: three asked for, more
    when the round step leaves one (5.8..19.9 µs: 10 alone, so 5, 10, 15)."""
    for n in (3, 4, 5, 6):
        got = [t for t in _ticks(lo, hi, n) if lo <= t <= hi]
        if len(got) >= 2:
            return got
    return [lo, hi] if hi > lo else [lo]


def x_labelled(n, most=10):
    """The points whose number is written under the axis: all of up to
    `most` kernels, else every k-th and the last."""
    k = max(1, math.ceil(n / most))
    return [i for i in range(0, n, k) if i <= n - 1 - k] + [n - 1] if n else []


def kernel_key(labels):
    """The key of the charts' numbers: 1 = the first kernel, ..."""
    return "Kernels, left to right: " + "; ".join(f"<b>{i}</b> {esc(x)}" for i, x in enumerate(labels, start=1)) + "."


def changes_section(res, opts, ids):
    """Where it changed, for the top of the page."""
    labels = [g.label for g in res.groups]
    out = ["<h2 id='series'>Where it changed</h2>",
           f"<p class='note'>A series of {len(labels)} kernels, in "
           f"{'the order given' if res.left_out else 'release order'}: "
           + " &rarr; ".join(f"<b>{esc(x)}</b>" for x in labels) + ".  "
           + esc(series_text.adjustment_lines(res, opts)[0]) + "</p>"]
    if res.left_out:
        out.append("<p class='note'>Left out (not in --order): " + esc(", ".join(g.label for g in res.left_out))
                   + "</p>")
    for st in res.steps:
        if st.shift is not None and st.shift.shifted:
            out.append(f"<div class='alarm'>Machine shift between {esc(st.base.label)} and {esc(st.other.label)}: "
                       f"the control cases ran {esc(st.shift.change_text)}; no case is called faster or slower at "
                       "that step.</div>")
        for reason, cases in series_text.not_judged_reasons(st.rows).items():
            out.append(f"<details class='nj'><summary>Not judged between {esc(st.base.label)} and "
                       f"{esc(st.other.label)}: {len(cases)} case(s), {esc(reason)}</summary><p>"
                       + ", ".join(f"<a href='#{esc(ids[c])}'>{esc(c)}</a>" if c in ids else esc(c) for c in cases)
                       + "</p></details>")
    if not res.changes:
        out.append("<p><b>Nowhere</b>: no case changed significantly at any step.</p>")
        return out
    out.append("<table class='sort changes'><thead><tr><th>case</th><th>changed at</th><th>from</th><th>change</th>"
               f"<th>ratio</th><th>{opts.level * 100:.0f}% CI</th><th>stayed?</th></tr></thead><tbody>")
    for ch in res.changes:
        cls = verdict_class(ch.cmp)
        name = esc(ch.case)
        if ch.case in ids:
            name = f"<a href='#{esc(ids[ch.case])}'>{name}</a>"
        words = series_text.change_words(ch, res)
        if ch.cmp.verdict != stats.FAILED:
            words = f"{speed_words(ch.cmp.ratio, ch.cmp.metric)[0]} <small>{esc(words)}</small>"
        else:
            words = esc(words)
        size = ch.size if not math.isinf(ch.size) else 99
        out.append(f"<tr><td>{name}</td><td class='k'>{esc(res.label(ch.index))}</td>"
                   f"<td>{esc(res.label(ch.index - 1))}</td>"
                   f"<td class='{cls}' data-v='{size:.4f}' title='{esc(cmp_title(ch.cmp, adjusted=opts.adjust))}'>"
                   f"{words}</td><td class='num'>{'-' if math.isnan(ch.cmp.ratio) else f'{ch.cmp.ratio:.3f}'}</td>"
                   f"<td class='num'>{esc(ch.cmp.ci_text)}</td>"
                   f"<td>{esc(series_text.stayed_words(ch, res))}</td></tr>")
    out.append("</tbody></table>")
    return out


def trends_section(res, opts):
    """The small multiples: a chart per summary-table cell, per table."""
    labels = [g.label for g in res.groups]
    out = ["<h2 id='trends'>Trends</h2>",
           "<p class='note'>One chart per summary-table cell: its value on each kernel of the series, left to "
           f"right, with its {opts.level * 100:.0f}% interval (the reps' noise and the drift of a run, as the "
           "comparisons count it); a step judged slower is marked orange, faster blue, FAILED dark red, between "
           "the two kernels (hover a point for its value and the step).  × = not measured.</p>",
           f"<p class='note key'>{kernel_key(labels)}</p>"]
    for ti, t in enumerate(res.tables):
        charts = []
        for ci, col in enumerate(t.columns):
            points = []
            unit_ref = []
            for gi, (g, side) in enumerate(zip(res.groups, res.sides)):
                cell = col.cells.get(g.key)
                step = res.steps[gi - 1].cells.get((ti, ci)) if gi else None
                if cell is None:
                    points.append((math.nan, math.nan, math.nan, step))
                    continue
                v, lo, hi = series_mod.kernel_value(side, cell_key(t, col, cell), cell.series(opts.estimator), opts)
                points.append((v, lo, hi, step))
                unit_ref.append(v)
            good = [v for v in unit_ref if not math.isnan(v)]
            if not good:
                continue
            unit, div = column_unit(t, col, good)
            title = col.label + (f" ({col.note})" if col.note else "")
            charts.append(trend_svg(title, t.metric, unit, div, points, labels))
        if charts:
            out.append(f"<figure class='trends'><figcaption>{esc(t.title)}</figcaption>{''.join(charts)}</figure>")
    return out


CSS = """
svg.trend{margin:0 .4em .4em 0;border:1px solid #eee;background:#fff}svg.trend text{font-size:9px;fill:#333}
svg.trend text.t{font-size:10px;font-weight:600}svg.trend text.m{fill:#888}svg.trend line.g{stroke:#e6e6e6}
svg.trend path.l{stroke:#777;fill:none;stroke-width:1}svg.trend line.ci{stroke:#333;stroke-width:1.2}
svg.trend line.st{stroke-width:2;stroke-dasharray:3 2;opacity:.8}figure.trends{display:block}
figure.trends figcaption{font-weight:600;font-size:.95em}
"""


def html_section(m, ids):
    """The series sections of the page ([] without --series)."""
    res = getattr(m, "series", None)
    if res is None:
        return []
    return changes_section(res, m.opts, ids) + trends_section(res, m.opts)


# ------------------------------------------------------------ bisection log

BISECT_FIELDS = ("time", "commit", "subject", "kernel", "verdict", "exit", "ratio", "ci_low", "ci_high", "reps",
                 "note")


def read_bisect_log(path):
    """The steps of a bisection log (JSON Lines, one object per step, as
    bisect-step writes); a line that is not such an object is skipped and
    counted.  Returns (steps, bad line count)."""
    steps, bad = [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if not isinstance(obj, dict) or "commit" not in obj:
                bad += 1
                continue
            steps.append(obj)
    return steps, bad


def bisect_section(logs):
    """logs: [(path, steps)]: a table per bisection."""
    if not logs:
        return []
    out = ["<h2 id='bisect'>Bisection</h2>",
           "<p class='note'>Each step of <code>git bisect run scripts/bisect-step</code>: the commit tested, the "
           "kernel it built, its verdict (good = closer to the good reference, bad = closer to the bad one, skip = "
           "inconclusive after a retry with more reps, abort = a build or boot failure), and for the case that differs "
           "most between the references, its ratio to the good reference with its interval; the note gives bad's "
           "ratio to good and the midpoint the interval is judged against.</p>"]
    for path, steps in logs:
        out.append(f"<h3>{esc(path)}</h3><table class='bisect'><thead><tr>"
                   + "".join(f"<th>{esc(h)}</th>" for h in ("time", "commit", "subject", "kernel", "verdict", "exit",
                                                            "ratio to good", "interval", "reps", "note"))
                   + "</tr></thead><tbody>")
        for s in steps:
            verdict = str(s.get("verdict", ""))
            cls = {"good": "f1", "bad": "s2", "abort": "fail"}.get(verdict, "")
            ratio = s.get("ratio")
            lo, hi = s.get("ci_low"), s.get("ci_high")
            num = [x if isinstance(x, (int, float)) else None for x in (ratio, lo, hi)]
            out.append("<tr>" + f"<td>{esc(s.get('time', ''))}</td><td><code>{esc(str(s.get('commit', ''))[:12])}"
                       f"</code></td><td>{esc(s.get('subject', ''))}</td><td>{esc(s.get('kernel', ''))}</td>"
                       f"<td class='{cls}'>{esc(verdict)}</td><td class='num'>{esc(s.get('exit', ''))}</td>"
                       f"<td class='num'>{'' if num[0] is None else f'{num[0]:.3f}'}</td>"
                       f"<td class='num'>{'' if None in num[1:] else f'{num[1]:.3f}..{num[2]:.3f}'}</td>"
                       f"<td class='num'>{esc(s.get('reps', ''))}</td><td>{esc(s.get('note', ''))}</td></tr>")
        out.append("</tbody></table>")
    return out
