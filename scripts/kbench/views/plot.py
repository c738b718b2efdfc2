"""Charts (PNG and SVG).  The only module that imports matplotlib.

- per category: grouped bars of each kernel relative to the baseline, with
  the confidence interval as error bars, a line at 1.0 and the direction
  ("lower is better" / "higher is better") on the axis;
- per bench and variant: the raw samples of every kernel (a strip plot,
  coloured by rep, rep medians and the headline marked), so that a bimodal
  case looks bimodal;
- curves against size: one chart per curve the benchmarks declare (see
  decl), one line per kernel and series.
"""
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FixedLocator, FormatStrFormatter, NullLocator  # noqa: E402

from ..model import stats  # noqa: E402
from ..model.decl import case_sort_key, in_order, natural_key  # noqa: E402
from ..model.runs import parse_params  # noqa: E402
from .units import unit_for  # noqa: E402

plt.rcParams.update({
    "figure.dpi": 100, "savefig.dpi": 100, "font.size": 9, "axes.titlesize": 10,
    "svg.hashsalt": "kbench", "svg.fonttype": "none",
})

# No red and no green: on the page those mean slower and faster, and a
# kernel's series colour must not look like a verdict.
COLORS = ["#1f77b4", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
          "#393b79", "#8c6d31"]
# Ratio axes are logarithmic (x2 and x0.5 equally far from 1) and clipped
# to this range, so one case with a huge interval (a cross-CPU wake-up on a
# VM) does not flatten the rest; a clipped whisker runs off the edge.
RATIO_LIMITS = (0.25, 4.0)
MAX_BARS = 40  # cases per bar chart; more are split into parts


def slug(text):
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("_")
    return s[:80] or "x"


@dataclass
class Chart:
    """A chart kept in memory (out_dir None): for the page, which embeds it."""
    name: str     # what the file would be called, without the extension
    fmt: str      # png or svg
    data: bytes


def _save(fig, out_dir, name, formats):
    """Write the figure in each format; with out_dir None, keep it in memory
    (a Chart per format) instead."""
    paths = []
    if out_dir is None:
        for fmt in formats:
            buf = io.BytesIO()
            fig.savefig(buf, format=fmt, metadata=_metadata(fmt))
            paths.append(Chart(name, fmt, buf.getvalue()))
        plt.close(fig)
        return paths
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for fmt in formats:
        p = out_dir / f"{name}.{fmt}"
        fig.savefig(p, format=fmt, metadata=_metadata(fmt))
        paths.append(p)
    plt.close(fig)
    return paths


def _metadata(fmt):
    # No dates in the files: the same data gives the same charts.
    if fmt == "svg":
        return {"Date": None}
    if fmt == "png":
        return {"Software": None}
    return None


def _short_case(name, bench):
    return name[len(bench) + 1:] if name.startswith(bench + " ") else name


# ------------------------------------------------------------ bars


def category_bars(base_label, comparisons, out_dir, formats=("png", "svg")):
    """comparisons: [(kernel label, [compare.Row])] against base_label.
    Returns {category: [paths]} (the PNG/SVG of each chart)."""
    out = {}
    if not comparisons:
        return out
    cases = {}
    for _, rows in comparisons:
        for r in rows:
            cases.setdefault(r.case, r)
    for cat in in_order(r.category for r in cases.values()):
        for metric in ("latency", "bandwidth"):
            names = [n for n, r in cases.items() if r.category == cat and r.metric == metric]
            if not names:
                continue
            order = {r.case: i for i, r in enumerate(comparisons[0][1])}
            names.sort(key=lambda n: order.get(n, len(order)))
            parts = [names[i:i + MAX_BARS] for i in range(0, len(names), MAX_BARS)]
            for pi, part in enumerate(parts):
                title = f"{cat}: {metric}, relative to {base_label}"
                if len(parts) > 1:
                    title += f" (part {pi + 1} of {len(parts)})"
                fig = _bars(part, comparisons, metric, title)
                name = f"bars_{slug(cat)}_{metric}" + (f"_{pi + 1}" if len(parts) > 1 else "")
                out.setdefault(cat, []).extend(_save(fig, out_dir, name, formats))
    return out


def _margins(fig, left, right, bottom, top, **space):
    """Fixed margins, in inches: tight_layout measures every label by
    drawing it, most of a chart's cost."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h, **space)


TICK_PT = 7          # the size of the bar charts' case names, rotated 60 degrees
CHAR_EM = 0.56       # a case name's character, on average, in ems (DejaVu Sans; names are mostly lower case)


def _bars(names, comparisons, metric, title):
    k = len(comparisons)
    width = 0.8 / k
    fig_w = min(18, max(8, 0.32 * len(names) * max(1, k) + 2))  # 8: room for the title
    # the rotated names below the axes: their height, and how far the first reaches left
    longest = max(len(n) for n in names) * TICK_PT * CHAR_EM / 72
    bottom = longest * math.sin(math.radians(60)) + 0.2
    fig, ax = plt.subplots(figsize=(fig_w, 2.6 + bottom + 0.4))
    first = len(names[0]) * TICK_PT * CHAR_EM / 72 * 0.5
    left = max(0.95, first + 0.15 - 0.5 * (fig_w - 1.1) / len(names))
    _margins(fig, left, 0.15, bottom, 0.4)
    x = np.arange(len(names))
    for i, (label, rows) in enumerate(comparisons):
        by = {r.case: r.cmp for r in rows}
        h, lo, hi = [], [], []
        for n in names:
            c = by.get(n)
            ok = c is not None and not math.isnan(c.ratio)
            h.append(c.ratio if ok else np.nan)
            lo.append(c.ratio - c.lo if ok and not math.isnan(c.lo) else 0.0)
            hi.append(c.hi - c.ratio if ok and not math.isnan(c.hi) else 0.0)
        pos = x - 0.4 + width * (i + 0.5)
        color = COLORS[(i + 1) % len(COLORS)]
        bars = ax.bar(pos, np.nan_to_num(np.array(h) - 1.0), width * 0.9, bottom=1.0, color=color, alpha=0.85,
                      label=label)
        for b, n in zip(bars, names):   # not judged: hatched, and marked below
            if by.get(n) is not None and by[n].verdict == stats.NOT_JUDGED:
                b.set_hatch("////")
                b.set_alpha(0.35)
        ax.errorbar(pos, h, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], fmt="none", ecolor="black",
                    elinewidth=0.8, capsize=2)
        for p, v, c in zip(pos, h, [by.get(n) for n in names]):
            if c is None or math.isnan(v):
                ax.text(p, 1.0, "missing", rotation=90, ha="center", va="bottom", fontsize=6, color="#777")
            elif c.significant or c.unresolved or c.alone or c.modes or c.verdict == stats.NOT_JUDGED:
                mark = "*" if c.significant else "n" if c.verdict == stats.NOT_JUDGED else "?"
                if v >= 1:
                    top = c.hi if not math.isnan(c.hi) else v
                    ax.text(p, max(v, top), mark, ha="center", va="bottom", fontsize=9)
                else:
                    bottom = c.lo if not math.isnan(c.lo) else v
                    ax.text(p, min(v, bottom), mark, ha="center", va="top", fontsize=9)
    ax.axhline(1.0, color="black", linewidth=1.0)
    ax.set_yscale("log")
    shown = [v for (_, rows) in comparisons for r in rows if r.case in set(names)
             for v in (r.cmp.lo, r.cmp.hi, r.cmp.ratio) if not math.isnan(v) and v > 0]
    low = max(RATIO_LIMITS[0], min(shown + [1.0]) / 1.1)
    high = min(RATIO_LIMITS[1], max(shown + [1.0]) * 1.1)
    ax.set_ylim(min(low, 0.9), max(high, 1.1))
    ax.yaxis.set_major_locator(FixedLocator([0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 4.0]))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FormatStrFormatter("%.2g"))
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=TICK_PT)
    what = "time" if metric == "latency" else "bandwidth"
    ax.set_ylabel(f"{what} / baseline {what}\n({stats.direction_text(metric)})")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    reasons = sorted({r.cmp.not_judged for _, rows in comparisons for r in rows
                      if r.case in set(names) and r.cmp.verdict == stats.NOT_JUDGED})
    key = ["* significant change", "? inconclusive: significant before the adjustment, moved alone, "
           "or fast reps only"] + [f"n, hatched: not judged, {why}" for why in reasons]
    ax.legend(fontsize=7, loc="best", title="\n".join(key), title_fontsize=7)
    return fig


# ------------------------------------------------------------ strips


def strip_plots(groups, out_dir, formats=("png", "svg"), estimator=None):
    """One figure per (bench, variant): a panel per case (params and
    placement), every kernel's raw samples.  Returns {case name: path of
    the PNG (or first format)}."""
    by_bv = {}
    for g in groups:
        for c in g.cases.values():
            by_bv.setdefault((c.bench, c.variant), {})[c.name] = c
    out = {}
    labels = [g.label for g in groups]
    for (bench, variant), cases in sorted(by_bv.items(), key=lambda kv: (natural_key(kv[0][0]), natural_key(kv[0][1]))):
        names = sorted(cases, key=lambda n: case_sort_key(cases[n]))
        ncols = min(4, len(names))
        nrows = math.ceil(len(names) / ncols)
        width = max(5.0, 1.6 * ncols + 0.6 * len(groups) * ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, 2.6 * nrows + 0.5), squeeze=False)
        for ax, name in zip(axes.flat, names):
            _strip(ax, name, cases[name].metric, [(g.label, g.cases.get(name)) for g in groups], bench,
                   estimator)
        for ax in list(axes.flat)[len(names):]:
            ax.set_visible(False)
        fig.suptitle(f"{bench} {variant}: every sample\n(dots: samples, colour = rep; grey: rep medians; "
                     f"black: headline)", fontsize=8)
        # Fixed margins: tight_layout costs as much as drawing here.
        h_in = 2.6 * nrows + 0.5
        fig.subplots_adjust(left=0.9 / width, right=0.98, bottom=0.6 / h_in,
                            top=1 - 0.95 / h_in, wspace=0.45, hspace=0.55)
        paths = _save(fig, out_dir, f"samples_{slug(bench)}_{slug(variant)}", formats)
        for n in names:
            out[n] = paths[0]
    del labels
    return out


def _strip(ax, name, metric, sides, bench, estimator=None):
    rng = np.random.default_rng(0)
    ref = [c for _, c in sides if c is not None and c.reps]
    allv = np.concatenate([np.concatenate(c.rep_arrays()) for c in ref]) if ref else np.array([1.0])
    unit, div = unit_for(metric, float(np.median(allv)))
    for i, (label, c) in enumerate(sides):
        if c is None or not c.reps:
            ax.text(i, 0.5, "missing", transform=ax.get_xaxis_transform(), ha="center", fontsize=7,
                    color="#777")
            continue
        reps = c.rep_arrays()
        nrep = len(reps)
        xs, ys, cs, mx, my = [], [], [], [], []
        for j, r in enumerate(reps):
            xm = i + (j - (nrep - 1) / 2) * (0.6 / max(nrep, 1))
            xs.append(xm + rng.uniform(-0.04, 0.04, len(r)))
            ys.append(r / div)
            cs += [COLORS[j % len(COLORS)]] * len(r)
            med = float(np.median(r)) / div
            mx += [xm - 0.05, xm + 0.05, np.nan]
            my += [med, med, np.nan]
        # one call per kernel: drawing cost grows with the number of calls
        ax.scatter(np.concatenate(xs), np.concatenate(ys), s=6, c=cs, alpha=0.75, linewidths=0)
        ax.plot(mx, my, color="#888", linewidth=1.2)
        h = stats.Series.single(reps, metric, estimator=estimator).headline()
        ax.plot([i - 0.38, i + 0.38], [h / div, h / div], color="black", linewidth=1.5)
    ax.set_xticks(range(len(sides)))
    ax.set_xticklabels([_wrap(lbl) for lbl, _ in sides], fontsize=6)
    ax.set_xlim(-0.6, len(sides) - 0.4)
    ax.set_ylabel(f"{unit} ({stats.direction_text(metric)})", fontsize=7)
    ax.set_title(_short_case(name, bench), fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", alpha=0.3)


def _wrap(label, width=16):
    """Break a long kernel label after each '/' (host/kernel), and any part
    longer than width every width characters.  (No recursion: a host name
    with a '/' and more than width characters once recursed for ever.)"""
    label = str(label)
    if len(label) <= width:
        return label
    out = []
    parts = label.split("/")
    for i, part in enumerate(parts):
        part += "/" if i < len(parts) - 1 else ""
        out += [part[j:j + width] for j in range(0, len(part), width)] or [""]
    return "\n".join(x for x in out if x)


# ------------------------------------------------------------ curves


def _curve_points(cases, x, estimator=None):
    """[(x value, headline)] of these cases, sorted by x."""
    pts = []
    for c in cases:
        try:
            size = int(parse_params(c.params)[x])
        except (KeyError, ValueError):
            continue
        s = stats.Series.single(c.rep_arrays(), c.metric, estimator=estimator)
        pts.append((size, s.headline()))
    return sorted(pts)


def declared_curves(groups):
    """{chart id: {"title", "log_y", "cache_lines", "x", "metric", "panels": {panel: {series: {group key:
    [cases]}}}}} from the curves the cases declare.  A series is the cases
    of one bench and variant whose parameters other than x are equal."""
    charts = {}
    for g in groups:
        for c in sorted(g.cases.values(), key=case_sort_key):
            cv = c.decl["curve"]
            if cv is None or c.control or not c.reps:
                continue
            ch = charts.setdefault(cv["chart"], {"title": cv.get("title") or cv["chart"], "x": cv["x"],
                                                 "log_y": bool(cv.get("log_y")),
                                                 "cache_lines": bool(cv.get("cache_lines")),
                                                 "metric": c.metric, "panels": {}})
            rest = {k: v for k, v in parse_params(c.params).items() if k != cv["x"]}
            label = " ".join([c.bench, c.variant] + [f"{k}={v}" for k, v in sorted(rest.items())])
            if c.placement not in ("", "unpinned", "pinned"):
                label += f" @{c.placement}"
            panel = ch["panels"].setdefault(cv.get("panel") or "", {})
            panel.setdefault(label, {}).setdefault(g.key, []).append(c)
    return charts


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))
    if len(ticks) > 12:
        step = math.ceil(len(ticks) / 12)
        ticks = ticks[::step]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([(f"{t // 1024}M" if t >= 1024 and t % 1024 == 0 else f"{t}K") for t in ticks],
                       rotation=45, fontsize=7)
    ax.set_xlabel("size (KB, log scale)")


LINE_STYLES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (3, 1, 1, 1, 1, 1))]
MARKERS = ["o", "s", "^", "v", "D", "x"]


def _cache_lines(ax, groups):
    """The first kernel's cache sizes as vertical lines (usually one machine)."""
    for i, g in enumerate(groups):
        for c in g.cache_levels():
            if str(c.get("type", "")).lower().startswith("instr") or not isinstance(c.get("size_kb"), (int, float)):
                continue
            ax.axvline(c["size_kb"], color=COLORS[i % len(COLORS)], alpha=0.25, linewidth=1)
            ax.text(c["size_kb"], 0.98, f" L{c.get('level')}", transform=ax.get_xaxis_transform(),
                    fontsize=7, va="top", ha="left", color="#555")
        break


def size_curves(groups, out_dir, formats=("png", "svg"), estimator=None):
    """One chart per curve the cases declare (see decl): each panel a
    subplot, one line per kernel and series, x on a log2 axis.  Returns
    {chart id: [paths]} for the charts that had data."""
    out = {}
    multi = len(groups) > 1
    for chart, ch in declared_curves(groups).items():
        panels = list(ch["panels"].items())
        ncols = min(3, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        single = len(panels) == 1
        fig, axes = plt.subplots(nrows, ncols, figsize=(8, 4.5) if single else (4.2 * ncols, 3.4 * nrows),
                                 squeeze=False)
        better = "lower is better" if ch["metric"] == "latency" else "higher is better"
        unit = "ns per op" if ch["metric"] == "latency" else "MB/s"
        for ax, (panel, series) in zip(axes.flat, panels):
            allsizes = []
            for si, (label, by_group) in enumerate(series.items()):
                for gi, g in enumerate(groups):
                    pts = _curve_points(by_group.get(g.key, []), ch["x"], estimator)
                    if not pts:
                        continue
                    xs, ys = zip(*pts)
                    allsizes += xs
                    name = (f"{g.label} " if multi else "") + label
                    ax.plot(xs, ys, linestyle=LINE_STYLES[si % len(LINE_STYLES)],
                            marker=MARKERS[si % len(MARKERS)], markersize=3, color=COLORS[gi % len(COLORS)],
                            label=name)
            if allsizes:
                _size_axis(ax, allsizes)
            if ch["cache_lines"]:
                _cache_lines(ax, groups)
            if ch["log_y"]:
                ax.set_yscale("log")
            ax.set_ylabel(f"{unit} ({better}" + (", log scale)" if ch["log_y"] else ")"))
            ax.set_title(ch["title"] if single else panel or ch["title"], fontsize=10 if single else 9)
            ax.grid(alpha=0.3, which="both" if ch["log_y"] else "major")
            ax.legend(fontsize=6)
        for ax in list(axes.flat)[len(panels):]:
            ax.set_visible(False)
        if not single:
            fig.suptitle(ch["title"], fontsize=10)
        _margins(fig, 0.8, 0.15, 0.65, 0.35 if single else 0.6, wspace=0.3 * 4.2 / 3.0, hspace=0.55)
        out[chart] = _save(fig, out_dir, "curve_" + slug(chart), formats)
    return out


# ------------------------------------------------------------ scaling


def scaling_curves(per_group, out_dir=None, formats=("png", "svg")):
    """One chart per scaling base case (scaling.py): the aggregate rate
    against the number of copies, a line per kernel, and dashed its ideal
    (N x its 1-copy aggregate).  per_group: [(group, scaling.curves(group))]
    (the caller computes them: plot does not import scaling, which imports
    plot).  Returns {chart name: [paths or Charts]}."""
    bases = []
    for _, cv in per_group:
        bases += [b for b in cv if b not in bases]
    out = {}
    for base in sorted(bases, key=natural_key):
        fig, ax = plt.subplots(figsize=(6, 3.6))
        unit, top = "ops/s", 1
        for gi, (g, cv) in enumerate(per_group):
            pts = cv.get(base)
            if not pts:
                continue
            ns = sorted(pts)
            ys = [pts[n].aggregate for n in ns]
            unit = pts[ns[0]].unit
            top = max(top, max(ns))
            color = COLORS[gi % len(COLORS)]
            ax.plot(ns, ys, marker="o", markersize=4, color=color, label=g.label)
            if 1 in pts:
                a1 = pts[1].aggregate
                ax.plot(ns, [a1 * n for n in ns], linestyle="--", color=color, alpha=0.6, label=f"{g.label} ideal")
        ax.set_xscale("log", base=2)
        ticks = sorted({n for _, cv in per_group for n in cv.get(base, {})})
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%d"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(0.8, top * 1.25)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("copies at once (one per CPU)")
        ax.set_ylabel(f"aggregate {unit} (higher is better)")
        ax.set_title(f"{base}: scaling")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        _margins(fig, 0.85, 0.15, 0.55, 0.35)
        out[f"scaling {base}"] = _save(fig, out_dir, "scaling_" + slug(base), formats)
    return out
