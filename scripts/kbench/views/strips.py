"""The raw-sample strips of the page, drawn as small inline SVG (no
matplotlib: hundreds of panels in a second or two, and a page of a few MB
over many runs).

One panel per case, one lane per kernel, in each lane one column per rep,
coloured by the run it belongs to.  With few samples (at most DOTS_MAX per
kernel) every sample is a dot; with more, each rep is drawn as a line from
its 10th to its 90th percentile with a dot at its median, so that twenty
runs stay readable and small.  The kernel's headline value is a black line
across its lane.  `plot.strip_plots` draws the same with matplotlib for
files (scripts/plot, report --plots).
"""
import html as _html
import math
from dataclasses import dataclass

import numpy as np

from ..model import stats
from ..model.decl import case_sort_key, natural_key
from .units import fmt_num, unit_for

# Runs, not verdicts: no blue and no orange (faster and slower on the page).
RUN_COLOURS = ["#7b3294", "#1b7837", "#c51b7d", "#5e3c99", "#8c510a", "#01665e", "#762a83", "#4d4d4d",
               "#b35806", "#2d004b"]
DOTS_MAX = 160          # samples per kernel and case up to which every sample is a dot
W, H = 250, 170         # one panel
LEFT, RIGHT, TOP, BOTTOM = 46, 6, 18, 30


def esc(s):
    return _html.escape(str(s), quote=True)


@dataclass
class StripFigure:
    """The strips of one bench and variant, as inline SVG markup."""
    name: str       # samples_BENCH_VARIANT (the figure's anchor: fig-NAME)
    inline: str


def _slug(text):
    import re
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_")
    return s[:80] or "x"


def _ticks(lo, hi, n=4):
    """About n round values between lo and hi."""
    if not (hi > lo):
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def rep_quantiles(arrays, qs):
    """[(quantile of each q)] of each array (numpy's linear interpolation;
    nan for an empty one), all arrays at once: one sort of every value,
    where np.quantile per array would cost tens of microseconds each, and
    a page of twenty runs has tens of thousands of reps."""
    lens = np.array([len(a) for a in arrays], dtype=np.intp)
    if not len(arrays) or not lens.sum():
        return [(math.nan,) * len(qs) for _ in arrays]
    vals = np.concatenate(arrays)
    which = np.repeat(np.arange(len(arrays)), lens)
    vals = vals[np.lexsort((vals, which))]
    start = np.concatenate(([0], np.cumsum(lens)[:-1]))
    last = np.maximum(lens - 1, 0)
    cols = []
    for q in qs:
        pos = q * last
        lo = np.floor(pos).astype(np.intp)
        hi = np.minimum(lo + 1, last)
        t = pos - lo
        a, b = vals[np.minimum(start + lo, len(vals) - 1)], vals[np.minimum(start + hi, len(vals) - 1)]
        cols.append(np.where(lens > 0, a + (b - a) * t, math.nan))
    return [tuple(float(c[i]) for c in cols) for i in range(len(arrays))]


def panel(title, metric, sides, estimator=None):
    """One case: sides = [(kernel label, load.Case or None)]."""
    present = [c for _, c in sides if c is not None and c.reps]
    if not present:
        return ""
    allv = np.concatenate([np.concatenate(c.rep_arrays()) for c in present])
    allv = allv[np.isfinite(allv)]
    if not allv.size:
        return ""
    unit, div = unit_for(metric, float(np.median(allv)))
    lo, hi = float(np.min(allv)) / div, float(np.max(allv)) / div
    pad = (hi - lo) * 0.06 or abs(hi) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad
    ph, pw = H - TOP - BOTTOM, W - LEFT - RIGHT
    lane = pw / len(sides)

    def y(v):
        return TOP + ph * (hi - v) / (hi - lo)

    out = [f"<svg class='strip' width='{W}' height='{H}' viewBox='0 0 {W} {H}' role='img' "
           f"aria-label='every sample of {esc(title)}'><title>{esc(title)}</title>",
           f"<text x='{W / 2:.0f}' y='12' text-anchor='middle' class='t'>{esc(title)}</text>"]
    for t in _ticks(lo, hi):
        out.append(f"<line x1='{LEFT}' x2='{W - RIGHT}' y1='{y(t):.1f}' y2='{y(t):.1f}' class='g'/>"
                   f"<text x='{LEFT - 3}' y='{y(t) + 3:.1f}' text-anchor='end'>{fmt_num(t)}</text>")
    out.append(f"<text x='9' y='{TOP + ph / 2:.0f}' transform='rotate(-90 9 {TOP + ph / 2:.0f})' "
               f"text-anchor='middle'>{esc(unit)} ({esc(stats.direction_text(metric))})</text>")
    for i, (label, c) in enumerate(sides):
        x0 = LEFT + i * lane
        cx = x0 + lane / 2
        short = label if len(label) <= 22 else label[:10] + "…" + label[-10:]
        out.append(f"<text x='{cx:.1f}' y='{H - 16}' text-anchor='middle'>{esc(short)}</text>")
        if c is None or not c.reps:
            out.append(f"<text x='{cx:.1f}' y='{TOP + ph / 2:.0f}' text-anchor='middle' class='m'>missing</text>")
            continue
        keys = c.rep_keys()
        reps = c.rep_arrays()
        runs = sorted({k[0] for k in keys}, key=lambda r: natural_key(str(r)))
        colour = {r: RUN_COLOURS[j % len(RUN_COLOURS)] for j, r in enumerate(runs)}
        n = len(reps)
        step = lane * 0.8 / max(n, 1)
        paths = {}
        dots = sum(len(r) for r in reps) <= DOTS_MAX
        finite = [r[np.isfinite(r)] / div for r in reps]
        quant = None if dots else rep_quantiles(finite, (0.1, 0.5, 0.9))
        for j, (k, r) in enumerate(zip(keys, finite)):
            if not r.size:
                continue
            x = x0 + lane * 0.1 + step * (j + 0.5)
            d = paths.setdefault(colour[k[0]], [])
            if dots:
                d += [f"M{x:.1f} {y(v):.1f}h.1" for v in r]
            else:
                q10, q50, q90 = quant[j]
                d.append(f"M{x:.1f} {y(q90):.1f}V{y(q10):.1f}M{x - 1.2:.1f} {y(q50):.1f}h2.4")
        width = 2.6 if dots else max(0.8, min(2.0, step * 0.6))
        for col, d in paths.items():
            out.append(f"<path d='{''.join(d)}' stroke='{col}' stroke-width='{width:.1f}' "
                       f"stroke-linecap='round' fill='none' stroke-opacity='0.8'/>")
        h = stats.Series.single(reps, metric, estimator=estimator).headline() / div
        if math.isfinite(h):
            out.append(f"<line x1='{x0 + 2:.1f}' x2='{x0 + lane - 2:.1f}' y1='{y(h):.1f}' y2='{y(h):.1f}' "
                       f"class='h'/>")
        if len(runs) > 1:
            out.append(f"<text x='{cx:.1f}' y='{H - 5}' text-anchor='middle' class='m'>{len(runs)} runs, "
                       f"{n} reps</text>")
    out.append("</svg>")
    return "".join(out)


def strip_figures(groups, estimator=None):
    """{case name: StripFigure of its bench and variant}, as plot.strip_plots."""
    by_bv = {}
    for g in groups:
        for c in g.cases.values():
            by_bv.setdefault((c.bench, c.variant), {})[c.name] = c
    out = {}
    for (bench, variant), cases in sorted(by_bv.items(), key=lambda kv: (natural_key(kv[0][0]),
                                                                         natural_key(kv[0][1]))):
        names = sorted(cases, key=lambda n: case_sort_key(cases[n]))
        panels = []
        for n in names:
            title = n[len(bench) + 1:] if n.startswith(bench + " ") else n
            panels.append(panel(title, cases[n].metric, [(g.label, g.cases.get(n)) for g in groups], estimator))
        fig = StripFigure(f"samples_{_slug(bench)}_{_slug(variant)}", "".join(panels))
        for n in names:
            out[n] = fig
    return out
