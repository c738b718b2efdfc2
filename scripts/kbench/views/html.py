"""The self-contained HTML report: inline CSS, a little optional inline
JavaScript (column sorting), nothing fetched from the network.  Every
string that comes from a result file goes through `esc`."""
import math
import re
from pathlib import Path

from ..model import controls, counters, explain, stats
from ..model.compare import flatten_meta, meta_differences
from ..model.judge import HostRuns
from ..model.decl import case_sort_key, categories as categories_of, category_of
from ..model.load import META, RUNS, SAMPLES
from ..model.runs import most_waiting
from ..model.summary import problems
from ..model.tables import CURVE_NOTE
from . import scaling_text, trends
from .compare_text import bulk_text, drift_basis, not_judged_reasons, run_level_source
from .explain_text import html_section as explain_section
from .page import (CSS, JS, WIDE_CI, Model, _beside, _by_chart, _chart_name, _val, cell_words, cmp_title, esc,  # noqa: F401
                   fig_id, figures, label_html, speed_words, verdict_class)
from .units import COUNTER_LABELS, column_unit, counter_fmt, counter_fmt_change, unit_for


# ------------------------------------------------------------ sections


def _summary_tables(m, ids):
    out = ["<h2 id='summary'>Summary tables</h2>",
           "<p class='note'>One row per kernel; each cell is the headline value (by default the Harrell-Davis "
           "20th percentile of the reps' times: noise only adds time).  Cells are coloured against the baseline "
           f"<b>{esc(m.baseline.label)}</b>: "
           "<span class='legend'><span class='f1'>faster</span><span class='f2'>faster &ge;10%</span>"
           "<span class='f3'>faster &ge;30%</span><span class='s1'>slower</span><span class='s2'>slower "
           "&ge;10%</span><span class='s3'>slower &ge;30%</span><span class='fail'>FAILED</span>"
           "<span>no significant change</span><span class='few'>too few reps</span>"
           "<span class='unres'>not resolved</span><span class='nj'>not judged (a machine or memory "
           "shift)</span><span class='wide'>too wide to judge</span></span>.  "
           f"Too wide: an interval whose ends are more than {WIDE_CI:g} times apart.  Under each value: the verdict (a change as the "
           "factor of speed, the same for times and throughputs: 1.25× slower = 1.25 times the time or 1/1.25 "
           f"of the MB/s), then the ratio to the baseline (time for latency, MB/s for bandwidth) and its "
           f"{m.opts.level * 100:.0f}% interval.  A value links to its case in <a href='#cases'>every case</a>; "
           "hover it for p and the sample counts; — = not measured.</p>"]
    for ti, t in enumerate(m.tables):
        if not any(c is not None for col in t.columns for c in col.cells.values()):
            continue
        heads = []
        units = []
        for col in t.columns:
            vals = []
            for g in m.groups:
                cell = col.cells.get(g.key)
                if cell is not None:
                    vals.append(cell.series(m.opts.estimator).headline())
            unit, div = column_unit(t, col, vals)
            units.append((unit, div))
            note = f"{col.note}, {unit}" if col.note else unit
            heads.append(f"<th>{esc(col.label)}<small>{esc(note)}</small></th>")
        out.append(f"<h3>{esc(t.title)} <small class='note'>({stats.direction_text(t.metric)})</small></h3>")
        out.append("<table class='sort summary'><thead><tr><th>kernel</th>" + "".join(heads) + "</tr></thead><tbody>")
        for g in m.groups:
            is_base = g.key == m.baseline.key
            cells = [f"<td class='k'>{label_html(g.label)}{' <small>baseline</small>' if is_base else ''}</td>"]
            cmps = None if is_base else m.comparisons.get(g.key, (None, {}))[1]
            for ci, col in enumerate(t.columns):
                unit, div = units[ci]
                cell = col.cells.get(g.key)
                if cell is None:
                    cells.append("<td class='miss' title='not measured in these runs'>—</td>")
                    continue
                s = cell.series(m.opts.estimator)
                v = s.headline()
                if is_base:
                    title = f"{cell.key}; {cell.note + '; ' if cell.note else ''}baseline; reps {s.n_reps}, " \
                            f"samples {s.n_samples}"
                    cells.append(f"<td class='num base' data-v='{v:.6g}' title='{esc(title)}'>{_val(v, div)}</td>")
                    continue
                cmp = cmps.get((ti, ci)) if cmps else None
                cls = verdict_class(cmp)
                title = cmp_title(cmp, cell.key, cell.note, adjusted=m.opts.adjust)
                anchor = ids.get(cell.cases[0].name) if cell.cases else None
                val = _val(v, div)
                if anchor:
                    val = f"<a class='v' href='#{esc(anchor)}'>{val}</a>"
                cells.append(f"<td class='num {cls}' data-v='{v:.6g}' title='{esc(title)}'>{val}{cell_words(cmp)}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
        guessed = [g.label for g in m.groups
                   if any(getattr(col.cells.get(g.key), "from_curve", False) for col in t.columns)]
        if guessed:
            out.append(f"<p class='note'>{esc(', '.join(guessed))}: {esc(CURVE_NOTE)} (each cell's size is in its "
                       "tooltip).</p>")
    return out


def _significance_text(m):
    """How a case is judged, in the words that match --no-adjust."""
    alpha = f"{1 - m.opts.level:.2g}"
    if m.opts.adjust:
        if m.opts.families == "tables":
            return (f"significant (p &lt; {alpha}) after adjusting for the number of cases compared "
                    "(Benjamini-Hochberg), within families: the cases behind each summary table above are a "
                    "family (primary: a change of one headline number is not diluted by the few hundred other "
                    "cases), every other case is one more (secondary), each adjusted for its own number of cases")
        if m.opts.families == "two":
            return (f"significant (p &lt; {alpha}) after adjusting for the number of cases compared "
                    "(Benjamini-Hochberg), within two families: the cases behind the summary tables above "
                    "(primary) and every other case (secondary), each for its own number of cases")
        return (f"significant (p &lt; {alpha}) after adjusting for the number of cases compared "
                "(Benjamini-Hochberg)")
    return (f"significant (p &lt; {alpha}) for that case on its own: <b>not adjusted for the number of cases "
            f"compared</b> (--no-adjust), so about {alpha} of the cases that did not change are called faster "
            "or slower by chance")


def case_ids(m):
    """{case name: anchor id}, unique, for every case in every case."""
    ids, used = {}, set()
    for g in m.groups:
        for c in g.cases.values():
            if c.control or c.name in ids:
                continue
            base = "case-" + (re.sub(r"[^A-Za-z0-9_.-]+", "-", c.name).strip("-") or "x")
            i, cid = 1, base
            while cid in used:
                i += 1
                cid = f"{base}-{i}"
            used.add(cid)
            ids[c.name] = cid
    return ids


def _run_level_text(m):
    """What the intervals hold about the machine's drift between runs, in
    the words compare and summarize use (compare_text.run_level_source)."""
    noise = m.opts.run_noise
    hosts = sorted({g.host for g in m.groups})
    parts = []
    for h in hosts:
        rn = noise.get(h) if noise is not None else (
            HostRuns([], m.opts.prior) if m.opts.prior is not None else None)
        kind, text = run_level_source(rn)
        parts.append(f"Run level on {esc(h)} ({kind}): {esc(text)}.")
    for g in m.groups:
        # (rows, cells, the groups their own bulk widened): compare's sentence per kernel
        got = m.comparisons.get(g.key) or ()
        if len(got) > 2 and got[2]:
            parts.append(f"Against {esc(g.label)}:{esc(bulk_text(got[2]))}")
    return " ".join(parts) + _more_runs_text(m)


def _more_runs_text(m):
    """What more runs of each kernel would buy, over every comparison shown."""
    cmps = [r.cmp for rows, *_ in m.comparisons.values() for r in rows if r.cmp.comparable and r.cmp.parts]
    meds = [f"{stats.mde_text(v)} with {k}"
            for k, v in stats.planned_medians([c.parts for c in cmps], (1, 2, 4, 8), m.opts.level)]
    if not meds:
        return ""
    noise = m.opts.run_noise
    rns = [noise.get(g.host) if noise is not None else None for g in m.groups]
    prior_only = [r for r in rns if r is not None and not r.measured]
    basis = drift_basis(prior_only[0] if len(prior_only) == len(rns) else None)
    return (f"  If the host drifts {basis}, each kernel run again at other moments and pooled would bring the "
            f"median mde to {', '.join(meds)} run(s) a side.")


def _all_cases(m, out_dir, ids):
    others = [g for g in m.groups if g.key != m.baseline.key]
    out = ["<h2 id='cases'>Every case</h2>",
           "<p class='note'>Headline value per kernel; for each other kernel the change against the baseline "
           "(as a factor of speed, the same for times and throughputs, and as the % of the time or of the MB/s; "
           f"ratio other/baseline, {m.opts.level * 100:.0f}% confidence interval from a hierarchical bootstrap "
           "from one model: the difference of the log estimates, bootstrap standard errors over reps, Welch t).  "
           f"A case is called faster or slower only when it is {_significance_text(m)}, and the change is at "
           f"least {m.opts.min_effect * 100:g}%; <i>inconclusive</i> = "
           "not significant, and the comparison could not have detected that minimum (mde = the smallest change "
           "it could detect).  Control cases are in <a href='#machine'>the machine</a>, never here.  "
           + _run_level_text(m) + "</p>"]
    names = {}
    for g in m.groups:
        for c in g.cases.values():
            if not c.control:
                names.setdefault(c.name, c)
    head = ["case", "unit", f"{m.baseline.label} (baseline)"]
    for g in others:
        head += [g.label, "change", "95% CI of ratio", "mde", "verdict"]
    est = m.opts.estimator
    memo = {}
    for cat in categories_of(names.values()):
        cases = sorted((c for c in names.values() if category_of(c) == cat), key=case_sort_key)
        if not cases:
            continue
        metrics = {c.metric for c in cases}
        direction = " / ".join(stats.direction_text(x) for x in sorted(metrics, key=lambda x: x != "latency"))
        flagged = {c.name for c in cases for g in others
                   if any(r.case == c.name and r.cmp.flagged for r in m.comparisons.get(g.key, ([], {}))[0])}
        hidden = "" if flagged else " nochg"
        out.append(f"<h3 class='cat{hidden}'>{esc(cat)} <small class='note'>({direction})</small></h3>")
        out.append(f"<div class='scroll{hidden}'><table class='sort cases{hidden}'><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head)
                   + "</tr></thead><tbody>")
        for c in cases:
            base_case = m.baseline.cases.get(c.name)
            ref = _headline(base_case, est, memo)
            if math.isnan(ref):
                ref = next((_headline(g.cases.get(c.name), est, memo) for g in others
                            if not math.isnan(_headline(g.cases.get(c.name), est, memo))), math.nan)
            unit, div = unit_for(c.metric, ref)
            link = m.strips.get(c.name)
            unit_html = esc(unit)
            if link is not None:
                unit_html += f" <a class='smp' href='#{esc(fig_id(link))}' title='every sample'>samples</a>"
            row_attr = f" id='{esc(ids[c.name])}'" if c.name in ids else ""
            if c.name in flagged:
                row_attr += " class='chg'"
            row = [f"<td>{esc(c.name)}</td>", f"<td>{unit_html}</td>", _num_cell(_headline(base_case, est, memo), div, "base")]
            for g in others:
                rows = m.comparisons.get(g.key, ([], {}))[0]
                cmp = next((r.cmp for r in rows if r.case == c.name), None)
                cls = verdict_class(cmp)
                title = esc(cmp_title(cmp, adjusted=m.opts.adjust))
                row.append(_num_cell(_headline(g.cases.get(c.name), est, memo), div, cls, title))
                if cmp is None:
                    row += ["<td></td>"] * 4
                    continue
                words, pct = speed_words(cmp.ratio, cmp.metric)
                row.append(f"<td class='{cls}' data-v='{_dv(cmp.change)}' title='{title}'>"
                           + (f"{esc(words)} <small>{esc(pct)}</small>" if words else "-") + "</td>")
                row.append(f"<td class='num'>{esc(cmp.ci_text)}</td>")
                row.append(f"<td class='num' data-v='{_dv(cmp.mde)}'>{esc(cmp.mde_text)}</td>")
                w = most_waiting([base_case, g.cases.get(c.name)])
                row.append(f"<td class='{cls}'>{esc(cmp.verdict)}"
                           + (f" <small>({esc(cmp.not_judged)})</small>" if cmp.not_judged_kind else "")
                           + (" <small>(not resolved: more reps needed)</small>" if cmp.unresolved else "")
                           + (" <small>(moved alone: measure that side again)</small>"
                              if getattr(cmp, "alone", False) else "")
                           + (" <small>(fast reps only: the median or the fastest rep did not follow)</small>"
                              if getattr(cmp, "modes", False) else "")
                           + (f" <small title='more than half its time blocked (I/O, a journal commit, a lock) on a "
                              f"side: the change is how long something made it wait, not the cost of its path'>"
                              f"(waiting {w * 100:.0f}%)</small>" if w is not None else "")
                           + "</td>")
            out.append(f"<tr{row_attr}>" + "".join(row) + "</tr>")
        out.append("</tbody></table></div>")
    return out


SCORE = [("failed", (stats.FAILED,), "fail"), ("slower", (stats.SLOWER,), "s2"), ("faster", (stats.FASTER,), "f2"),
         ("inconclusive", (stats.INCONCLUSIVE,), ""), ("no significant change", (stats.SAME,), ""),
         ("not judged", (stats.NOT_JUDGED,), "nj"), ("not tested", (stats.FEW, stats.MISSING, stats.UNDEFINED), "few")]


def _scoreboard(m):
    """Per kernel against the baseline: how many cases ended in each verdict."""
    others = [g for g in m.groups if g.key != m.baseline.key]
    if not others:
        return []
    out = ["<h2 id='score'>Scoreboard</h2>",
           f"<p class='note'>Cases of each kernel against the baseline <b>{esc(m.baseline.label)}</b>; faster "
           f"and slower = {_significance_text(m)}, by at least {m.opts.min_effect * 100:g}%.  "
           "<i>Not judged</i>: the machine's controls moved for that case's domain (a machine or memory shift: "
           "the reason is under the number and in each case's verdict); more reps cannot tell such a change "
           "from the machine's.  <i>Not tested</i>: too few reps, missing on a side, not comparable.  The "
           "<a href='#cases'>every case</a> tables list them; the filter above them shows only the changed "
           "ones.</p>",
           "<table class='score'><thead><tr><th>kernel</th>"
           + "".join(f"<th>{esc(name)}</th>" for name, _, _ in SCORE) + "<th>cases</th></tr></thead><tbody>"]
    for g in others:
        rows = m.comparisons.get(g.key, ([], {}))[0]
        cells = []
        for name, verdicts, cls in SCORE:
            n = sum(r.cmp.verdict in verdicts for r in rows)
            extra = ""
            if name == "inconclusive":
                u = sum(r.cmp.unresolved for r in rows)
                a = sum(getattr(r.cmp, "alone", False) for r in rows)
                mo = sum(getattr(r.cmp, "modes", False) for r in rows)
                extra = (f"<small>{u} not resolved (more reps)</small>" if u else "") + \
                    (f"<small>{a} moved alone (one run: measure again)</small>" if a else "") + \
                    (f"<small>{mo} fast reps only (a mix of modes)</small>" if mo else "")
            elif name in ("slower", "faster"):
                one = sum(r.cmp.verdict in verdicts and r.cmp.one_run for r in rows)
                extra = f"<small>{one} on one run a side: confirm with a second</small>" if one else ""
            elif name == "not judged":
                extra = "".join(f"<small>{len(cases)} {esc(reason)}</small>"
                                for reason, cases in not_judged_reasons(rows).items())
            cells.append(f"<td class='num {cls if n else ''}'>{n}{extra}</td>")
        out.append(f"<tr><td class='k'>{label_html(g.label)}</td>" + "".join(cells) + f"<td class='num'>{len(rows)}</td></tr>")
    out.append("</tbody></table>")
    return out


def _dv(v):
    return "" if v is None or math.isnan(v) else f"{v:.6g}"


def _headline(case, estimator, memo):
    """A case's headline value, computed once per page: memo is the
    section's own {(id of the case, its reps, estimator): (case, value)}."""
    if case is None or not case.reps:
        return math.nan
    key = (id(case), id(case.reps), len(case.reps), estimator)
    hit = memo.get(key)
    if hit is not None and hit[0] is case:
        return hit[1]
    v = stats.Series.single(case.rep_arrays(), case.metric, estimator=estimator).headline()
    memo[key] = (case, v)
    return v


def trace_svg(run, width=640, height=150):
    """An inline SVG of one run's control trace: each control rep as a dot
    at the time it ran (time / that control's run median), the median of
    the controls per slice of the run as a line, stretches where they ran
    more than 5% slow shaded."""
    pts = controls.trace(run, None)
    cpu = controls.trace(run)
    mem = controls.trace(run, "memory")
    if not pts:
        return ""
    left, right, top, bottom = 40, 10, 10, 22
    lo, hi = 0.9, 1.4
    dur = max(p.t_s for p in pts) or 1.0
    def x(t):
        return left + (width - left - right) * t / dur
    def y(v):
        v = min(max(v, lo), hi)
        return top + (height - top - bottom) * (hi - v) / (hi - lo)
    out = [f"<svg class='trace' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
           f"role='img' aria-label='control cases of run {esc(run.run_id)} over time'>"]
    for a, b in controls.disturbed_times(cpu):
        out.append(f"<rect x='{x(a):.1f}' y='{top}' width='{max(1.0, x(b) - x(a)):.1f}' "
                   f"height='{height - top - bottom}' fill='#fde2e2'/>")
    for v in (1.0, 1.1, 1.2, 1.3):
        out.append(f"<line x1='{left}' x2='{width - right}' y1='{y(v):.1f}' y2='{y(v):.1f}' "
                   f"stroke='{'#888' if v == 1.0 else '#e4e4e4'}' stroke-width='1'/>")
        out.append(f"<text x='{left - 4}' y='{y(v) + 3:.1f}' text-anchor='end'>{v:.1f}</text>")
    colours = ["#1f5fa8", "#7a4ea3", "#b07000", "#2b8a3e"]
    names = sorted({p.case for p in pts})
    for p in pts:
        c = colours[names.index(p.case) % len(colours)]
        out.append(f"<circle cx='{x(p.t_s):.1f}' cy='{y(p.rel):.1f}' r='1.8' fill='{c}' fill-opacity='0.6'/>")
    for series, style in ((cpu, "stroke='#222' stroke-width='1.5'"),
                          (mem, "stroke='#2b8a3e' stroke-width='1.5' stroke-dasharray='4 3'")):
        bins = controls.binned(series, 40)
        line = [f"{x((i + 0.5) * dur / len(bins)):.1f},{y(v):.1f}" for i, v in enumerate(bins) if not math.isnan(v)]
        if len(line) > 1:
            out.append(f"<polyline points='{' '.join(line)}' fill='none' {style}/>")
    out.append(f"<text x='{left}' y='{height - 6}'>0 s</text>")
    out.append(f"<text x='{width - right}' y='{height - 6}' text-anchor='end'>{dur:.0f} s</text>")
    legend = ", ".join(f"{n.split()[-1]}" for n in names)
    out.append(f"<text x='{(left + width) / 2:.0f}' y='{height - 6}' text-anchor='middle'>"
               f"time / run median ({esc(legend)}; line = CPU controls' median per slice"
               + ("; dashed = memory control" if mem else "") + ")</text>")
    out.append("</svg>")
    return "".join(out)


def _moved_word(cmp):
    """A control's "moved?" cell: significant and by the minimum effect."""
    return "moved" if cmp.significant else "no"


def _machine(m):
    """The machine's own speed: control traces per run, shifts per kernel."""
    runs = [(g, r) for g in m.groups for r in g.runs if any(c.control for c in r.cases.values())]
    out = ["<h2 id='machine'>The machine (control cases)</h2>",
           "<p class='note'>Control cases (work with no system call, fault or TLB miss in it: for example "
           "a load chain in L1, an arithmetic chain, a copy within L2) cost the same on every kernel; they run "
           "between the other cases all through a run and measure the machine's state: its CPU speed, and with "
           "the memory controls (a 64 MB read, a random chase through 16 MB) the memory system, which on shared "
           "machines switches regimes for minutes.  Every CPU- and memory-bound case is judged relative to "
           "them, as far as the host's runs show it follows them.  When a control moves beyond what the host's "
           "runs have shown, the cases that follow it are not judged: all of them for the CPU's speed, the "
           "memory-bound ones (memory bandwidth and latency, file and mmap reread) for a memory control.</p>"]
    if not runs:
        out.append("<p>No run here has control cases (runs made before kbench had them): a shift of the "
                   "machine between runs cannot be told from a change of the kernel.</p>")
        return out
    for g in m.groups[1:]:
        sh = m.shifts.get(g.key)
        if sh is None:
            continue
        rows = "".join(f"<tr><td>{esc(r.case)}</td><td class='num'>{r.cmp.ratio:.3f}</td>"
                       f"<td class='num'>{esc(r.cmp.ci_text)}</td><td>{esc(r.cmp.change_text)}</td>"
                       f"<td>{_moved_word(r.cmp)}</td></tr>" for r in sh.all_rows)
        verdict = (f"<span class='s2'>machine shift: {esc(sh.why('cpu'))}; no verdicts</span>" if sh.shifted else
                   f"<span class='s2'>memory shift: {esc(sh.why('memory'))}; the memory-bound cases are not "
                   "judged</span>" if sh.memory_shifted else
                   f"the CPU- and memory-bound cases are judged relative to the controls (the CPU's speed: "
                   f"{esc(sh.speed_change_text)})" if sh.relative else "every case judged as measured")
        out.append(f"<h3>{esc(g.label)} against {esc(m.baseline.label)}: {verdict}</h3>"
                   "<table><thead><tr><th>control</th><th>ratio</th><th>95% CI</th><th>change</th>"
                   f"<th>moved?</th></tr></thead><tbody>{rows}</tbody></table>")
    out.append("<h3>Control speed over each run</h3>")
    figs = m.traces if m.traces is not None else run_traces(m.groups)
    out += [f"<figure>{svg}<figcaption>{esc(g.label)}, run {esc(r.run_id)}: {esc(note)}</figcaption></figure>"
            for g, r in runs for svg, note in [figs[(g.key, r.run_id)]]]
    return out


def run_traces(groups):
    """{(group key, run id): (the SVG of the run's control trace, its last
    line of words)} of every run with control cases (made beforehand by the
    page's second process, or here)."""
    out = {}
    for g in groups:
        for r in g.runs:
            if any(c.control for c in r.cases.values()):
                lines = controls.describe(r)
                out[(g.key, r.run_id)] = (trace_svg(r), lines[-1].strip() if lines else "")
    return out


def _num_cell(v, div, cls="", title=""):
    t = f" title='{title}'" if title else ""
    if math.isnan(v):
        return f"<td class='miss'{t}>—</td>"
    return f"<td class='num {cls}' data-v='{v:.6g}'{t}>{_val(v, div)}</td>"


def _meta_table(m):
    metas = [flatten_meta(g.meta, skip=()) for g in m.groups]
    differs = set(_meta_differences(m))
    keys = []
    for fm in metas:
        for k in fm:
            if k not in keys:
                keys.append(k)
    out = ["<h2 id='meta'>Machines and runs</h2>",
           "<p class='note'>From each run's meta.json (values that differ between the runs of one kernel are "
           "joined with |).  <span style='background:#fff3c4'>Highlighted</span>: conditions other than the "
           "kernel that differ between the kernels compared &mdash; they may explain a difference as well as "
           "the kernel does.</p>",
           "<div class='scroll'><table><thead><tr><th>key</th>" + "".join(f"<th>{esc(g.label)}</th>" for g in m.groups)
           + "</tr></thead><tbody>"]
    for k in keys:
        vals = [fm.get(k, "(absent)") for fm in metas]
        cls = " class='diff'" if k in differs else ""
        out.append(f"<tr{cls}><td>{esc(k)}</td>" + "".join(f"<td>{esc(v)}</td>" for v in vals) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def _raw_files(m, out_dir):
    """Links to each run's files when they sit beside the page (published
    with it, the links resolve); else where they were, as text."""
    out = ["<h2 id='raw'>Raw files</h2>",
           "<p class='note'>Links are relative to the page and are given only for runs in its directory or "
           "below it (publish them together); for the others, the directory the page was made from.  Copied "
           "alone, the page keeps all of its tables and charts.</p><ul>"]
    for g in m.groups:
        for r in g.runs:
            links = []
            for name in (META, SAMPLES, RUNS):
                p = Path(r.path) / name
                if p.is_file():
                    rel = _beside(p, out_dir)
                    links.append(f"<a class='raw' href='{esc(rel)}'>{esc(name)}</a>" if rel is not None
                                 else esc(name))
            note = f" <span class='few'>({esc(r.status)})</span>" if r.status not in ("complete", "unknown") else ""
            where = "" if _beside(r.path, out_dir) is not None else \
                f" <small>(not beside this page: in <code>{esc(Path(r.path).resolve())}</code>)</small>"
            out.append(f"<li><b>{esc(g.label)}</b> run <code>{esc(r.run_id)}</code>{note}: {' · '.join(links)}"
                       f"{where}</li>")
    out.append("</ul>")
    return out


def _counters(m):
    """Counters per operation (runs made with --counters), one row per case
    and kernel; other kernels' cells carry the change against the baseline
    in their title."""
    per_case = {}
    for g in m.groups:
        for c in g.cases.values():
            if c.counters:
                per_case.setdefault(c.name, []).append((g, c))
    if not per_case:
        return []
    vals = {(g.key, c.name): counters.headlines(c) for rows in per_case.values() for g, c in rows}
    cols = counters.columns(list(vals.values()))
    out = ["<h2 id='counters'>Counters per operation</h2>",
           "<p class='note'>From runs made with <code>--counters</code>: each counter's total over a sample "
           "divided by its operations, the median over reps of each rep's median; IPC = instructions / "
           "cycles.  A counter the machine lacks is left blank, never shown as zero.  Hover a cell for the "
           "change against the baseline.</p>",
           "<table class='sort'><thead><tr><th>case</th><th>kernel</th>"
           + "".join(f"<th>{esc(COUNTER_LABELS[k])}</th>" for k in cols) + "</tr></thead><tbody>"]
    for name in sorted(per_case, key=lambda n: case_sort_key(per_case[n][0][1])):
        base_vals = vals.get((m.baseline.key, name), {})
        for g, c in per_case[name]:
            v = vals[(g.key, name)]
            cells = []
            for k in cols:
                title = ""
                if g.key != m.baseline.key and k in v and k in base_vals and base_vals[k] > 0:
                    title = f" title='{esc(counter_fmt_change((v[k] / base_vals[k] - 1) * 100))} than the baseline'"
                cells.append(f"<td class='num'{title}>{esc(counter_fmt(v.get(k, math.nan)))}</td>")
            out.append(f"<tr><td>{esc(name)}</td><td>{esc(g.label)}</td>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return out


def _problems(m):
    items = []
    for g in m.groups:
        for case, status, reason, reps in problems(g):
            where = f" (rep {', '.join(str(x) for x in sorted(set(reps)))})" if reps else ""
            items.append(f"<li><b>{esc(g.label)}</b>: {esc(status)} <code>{esc(case)}</code>{esc(where)}: "
                         f"{esc(reason or 'no reason recorded')}</li>")
    if not items:
        return []
    return ["<h2 id='problems'>Cases that did not run cleanly</h2><ul>"] + items + ["</ul>"]


def _settle(m):
    """The page's parts still being drawn in second processes (m.later,
    m.bars), once they are: render asks for them last."""
    if m.later is not None:
        m.curves, strips, m.scaling, m.traces = m.later.result()
        m.strips, m.later = strips if m.strips is None else m.strips, None
    if hasattr(m.bars, "result"):
        m.bars = m.bars.result()


def _charts(m):
    out = []
    if m.bars:
        out.append("<h2 id='charts'>Charts against the baseline</h2>")
        out.append("<p class='note'>Each bar: a kernel's value divided by the baseline's, with the 95% "
                   "confidence interval; * marks a significant change.</p>")
        for cat, items in m.bars.items():
            charts = _by_chart(items)
            out += figures({f"{cat} ({i + 1})" if len(charts) > 1 else cat: its
                             for i, its in enumerate(charts.values())})
    if m.curves:
        out.append("<h2 id='curves'>Against size</h2>")
        out += figures(m.curves)
    if m.strips:
        charts = {}
        for it in m.strips.values():
            charts.setdefault(_chart_name(it), it)
        out.append("<h2 id='samples'>Raw samples</h2>")
        out.append("<details><summary>Every sample of every case, per kernel "
                   f"({len(charts)} charts; the <i>samples</i> links in <a href='#cases'>every case</a> lead to "
                   "theirs)</summary>")
        out.append("<p class='note'>One column per rep, coloured by the run it belongs to; with few samples "
                   "every sample is a dot, with many each rep is a line from its 10th to its 90th percentile "
                   "with a tick at its median; the black line is the kernel's headline value.</p>")
        out += figures({n[len("samples_"):] if n.startswith("samples_") else n: [it]
                         for n, it in sorted(charts.items())}, prefer=("png", "svg"))
        out.append("</details>")
    return out


def render(m, out_path):
    """The page as a string; links are relative to out_path's directory.
    The sections of report --series and --bisect (views/trends.py) go
    first, above the scoreboard."""
    out_dir = Path(out_path).parent
    kernels = ", ".join(esc(g.label) for g in m.groups)
    parts = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             f"<title>kbench: {kernels}</title>", f"<style>{CSS}{trends.CSS}</style></head><body>",
             "<h1>kbench: operating-system latency and bandwidth by kernel</h1>",
             f"<p>Kernels: {kernels}.  Baseline: <b>{esc(m.baseline.label)}</b>."
             + (f"  Generated {esc(m.generated)}." if m.generated else "") + "</p>",
             "<p class='note'>Latencies: lower is better.  Bandwidths: higher is better.  Each rep is a separate "
             "process run and is the unit of comparison; see <a href='#cases'>every case</a> for the details, "
             "<a href='#meta'>machines and runs</a> for what else differs.</p>"]
    diffs = _meta_differences(m)
    if diffs:
        parts.append("<div class='warn'><b>The kernels were not measured under the same conditions.</b> "
                     "Besides the kernel, these differ: " + ", ".join(f"<code>{esc(k)}</code>" for k in diffs)
                     + " (see <a href='#meta'>the table</a>).</div>")
    parts += [f"<div class='alarm'>{esc(w[len('WARNING: '):])}</div>"      # vm-run's emulated guests
              for w in m.warnings if w.startswith(("WARNING: EMULATED", "WARNING: DIFFERENT ARCHITECTURES"))]
    for g in m.groups[1:]:
        sh = m.shifts.get(g.key)
        if sh is not None and sh.shifted:
            parts.append(f"<div class='alarm'>Machine shift during {esc(g.label)} against {esc(m.baseline.label)}: "
                         f"{esc(sh.why('cpu'))}.  The verdicts for that kernel are not about the kernel: none is "
                         "called faster or slower (see <a href='#machine'>the machine</a>).</div>")
        elif sh is not None and sh.memory_shifted:
            parts.append(f"<div class='warn'>Memory shift during {esc(g.label)} against {esc(m.baseline.label)}: "
                         f"{esc(sh.why('memory'))}.  Its memory-bound cases are not judged; the others are (see "
                         "<a href='#machine'>the machine</a>).</div>")
    if m.warnings:
        parts.append("<details><summary>Warnings while reading the results "
                     f"({len(m.warnings)})</summary><ul>"
                     + "".join(f"<li>{esc(w)}</li>" for w in m.warnings) + "</ul></details>")
    ids = case_ids(m)
    parts += trends.html_section(m, ids) + trends.bisect_section(m.bisect)
    parts += _scoreboard(m)
    parts += _summary_tables(m, ids)
    # first what needs nothing still being drawn in second processes (_settle), then the rest
    against = scaling_text.html_against(m)
    cases = _all_cases(m, out_dir, ids) if m.strips is not None else None
    tail = _explain(m, ids)
    after = _counters(m) + _problems(m) + _meta_table(m) + _raw_files(m, out_dir)
    _settle(m)
    parts += _charts(m)
    parts += scaling_text.html_section(m, against)  # the copies at once
    parts += cases if cases is not None else _all_cases(m, out_dir, ids)
    parts += tail + _machine(m) + after
    parts.append(f"<script>{JS}</script>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _explain(m, ids):
    """Why the changed cases changed: their profiles on the two kernels
    (explain.py), for every kernel against the baseline; nothing when no
    run of either has profiles."""
    base_prof = explain.side_profiles(m.baseline)
    out = []
    for g in m.groups:
        if g.key == m.baseline.key:
            continue
        other_prof = explain.side_profiles(g)
        if not base_prof and not other_prof:
            continue
        rows = m.comparisons.get(g.key, ([], {}))[0]
        expls = explain.explain_rows(rows, m.baseline, g, everything=False, profiles=(base_prof, other_prof))
        if expls:
            n = len(out) + 1
            out.append(explain_section(
                expls, esc, ids.get, f"Why it changed: kernel profiles, {g.label} against {m.baseline.label}",
                "explain" if n == 1 else f"explain-{n}"))
    return out


def _meta_differences(m):
    """Flattened meta keys of the conditions that differ between the
    baseline and another kernel: compare's own (meta_differences), so that
    the banner and the highlighted rows say what compare says."""
    keys = []
    for g in m.groups:
        if g.key != m.baseline.key:
            keys += [k for k, _, _ in meta_differences(m.baseline.meta, g.meta) if k not in keys]
    return keys
