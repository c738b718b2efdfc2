"""The terminal text of a comparison (compare): the machine check, how the
intervals were made, the run level, the plan of more runs, the notes and
the tables.  The words for the run level and the adjustment are shared
with summarize and the page (they import them from here)."""
import math

from ..model import defaults, stats
from ..model.compare import Options, Row, noise_of
from ..model.counters import changes as counter_changes
from ..model.decl import in_order
from .text import table
from .units import COUNTER_LABELS, counter_fmt, counter_fmt_change, fmt_num, unit_for
from ..model.groups import arch_warning, quick_note
from ..model.sessions import SESSION_SHARE, taken


def run_level_source(noise):
    """(short name, sentence) of what a run level rests on: 'prior' (the
    built-in prior alone), 'host' (the host's runs weighed against the
    prior), 'host only' (measured, no prior: --no-prior), or 'none'.
    compare, summarize and the page all say it with these words."""
    if not noise:
        return "none", ("not measured: the intervals hold the noise between reps only, not the drift of the "
                        "machine between runs (too narrow on a machine that drifts)")
    if not noise.measured:
        return "prior", (f"no kernel of this host has two runs: the built-in drift prior "
                         f"({len(noise.prior.cases)} cases)")
    on_boots, _ = boots_text(noise)
    if noise.prior is not None:
        return "host", (f"measured on this host from {noise.runs} runs of {noise.kernels} kernel(s) with two runs "
                        f"or more{on_boots}, each case's spread weighed against the built-in drift prior")
    return "host only", (f"measured on this host from {noise.runs} runs of {noise.kernels} kernel(s) with two runs "
                         f"or more{on_boots} (no built-in prior: --no-prior)")


DOMAIN_WORDS = {"cpu": "CPU-bound", "cross": "cross-CPU", "same": "same-CPU two-party", "memory": "memory-bound",
                "fs": "file-system-bound", "control": "control"}
SCALE_SOURCE = {"runs": "the runs of each kernel with two", "comparison": "the bulk of this comparison's cases",
                "prior": "the prior as it is"}


def scale_text(scale):
    """One phrase: how far this comparison's runs drift against the built-in
    prior, per domain (runmodel.Fit.scale: the prior's drift times sqrt(a),
    the reps' noise times sqrt(b)), and what measured it; '' without one.
    "the drift now: CPU-bound cases 0.45x the prior's (the bulk of this
    comparison's cases), ..."."""
    parts = [f"{DOMAIN_WORDS.get(d, d)} cases {math.sqrt(a):.2g}x the prior's ({SCALE_SOURCE.get(src, src)})"
             for d, (a, b, src) in sorted(scale.items(), key=lambda kv: list(DOMAIN_WORDS).index(kv[0])
                                          if kv[0] in DOMAIN_WORDS else 9) if d != "control"]
    return ("scaled to the moment of these runs: " + ", ".join(parts)) if parts else ""


def follow_text(follow):
    """One sentence: how far, with one run a side, the cases of each group
    followed the memory controls' move, as the comparison's bulk measured
    it against the slopes' prior (runmodel.Fit.follow: the prior's sd times
    sqrt(c)); '' without one."""
    parts = [f"{GROUP_WORDS.get(g, DOMAIN_WORDS.get(g, g) + ' cases')} {math.sqrt(c):.2g}x"
             for g, c in sorted(follow.items())]
    return (" How far the cases followed the memory controls' move, against how far their slopes' prior allows "
            "(measured on the bulk of this comparison's cases): " + ", ".join(parts) + ".") if parts else ""


# what each group of runmodel.BULK_GROUPS shares, and how far a control shows it
SHARED_WORDS = {"cross": "what they share, the other CPU's wakeups, has no control",
                "same": "what they share, the CPU's scheduling of two processes, has no control",
                "dram": "what they share, the memory's regime, the memory control shows only in part",
                "fs": "what they share, the file system's state, has no control",
                "state": "what they share, the state the memory manager was left in, has no control"}
GROUP_WORDS = {"dram": "memory-bound cases with a buffer the memory control's size or larger",
               "state": "memory manager's cases (process creation, page faults, mappings)"}


def bulk_text(bulk):
    """One sentence per group widened by its own bulk (runmodel.Fit.bulk),
    '' without one: "The cross-CPU cases moved together 2.1x as far as
    their runs' spread allows (what they share, the other CPU's wakeups,
    has no control): their intervals are widened by it, never past the
    prior's." (the factor: the square root of runmodel.bulk_widen's lam)"""
    return "".join(f" The {GROUP_WORDS.get(g, DOMAIN_WORDS.get(g, g) + ' cases')} moved together "
                   f"{math.sqrt(lam):.2g}x as far as their runs' spread allows "
                   f"({SHARED_WORDS.get(g, 'no control shows it')}): their intervals are widened by it, never "
                   f"past the prior's." for g, lam in sorted(bulk.items()))


def sessions_text(measured):
    """One sentence: the sides ran in sessions of their own, and the host's
    runs of kernels that ran in several sessions measured a session's
    level (runmodel.Fit.sessions: per share group the measured share and
    its session dof), moderated towards the built-in share; '' without."""
    parts = [f"{GROUP_WORDS.get(g, DOMAIN_WORDS.get(g, g) + ' cases')} {s:.2g} (built in "
             f"{SESSION_SHARE[g]:.2g}, taken {taken(SESSION_SHARE[g], (s, dof)):.2g})"
             for g, (s, dof) in sorted(measured.items()) if g in SESSION_SHARE]
    if not parts:
        return ""
    dof = max(dof for _, dof in measured.values())
    return (" The sides ran in sessions of their own; how far sessions move a case, as a share of one run's "
            f"variance, measured on this host's runs of kernels that ran in several sessions ({dof:.0f} "
            f"degree{'' if dof == 1 else 's'} of freedom between sessions; moderated towards the built-in share, "
            "never taken below it): " + ", ".join(parts) + ".")


def boots_text(noise):
    """What the run level says about boots: ' on B boot(s)' and, on one boot,
    the level it leaves out."""
    if noise.boots is None:
        return " (boots not recorded for all of them: runs made before kbench 0.2.0 recorded boot_id)", ""
    if noise.boots == 1:
        return (" on one boot", " All on one boot: an offset a boot adds (where the kernel and its data land in "
                "memory) is not in it, and two kernels are always two boots; runs of one kernel on two boots "
                "measure it too.")
    return f" on {noise.boots} boots", ""


def value_text(v, unit, div):
    if v is None or math.isnan(v):
        return "-"
    return fmt_num(v / div)


ESTIMATOR_TEXT = {
    "low": "20th percentile of the reps' times (Harrell-Davis)",
    "median": "median of the rep medians",
}


def row_cells(row, waiting=None):
    """Text cells of one comparison row (terminal and CSV share them).

    A case that could not be tested (too few reps, missing) shows its two
    values but no change: a ratio of two values that no test stands behind
    reads like a finding.  waiting: the case's blocked share when it was
    dominated by waiting on a side (`waiting_shares`): marked in the verdict."""
    c = row.cmp
    ref = c.base if not math.isnan(c.base) else c.other
    unit, div = unit_for(row.metric, ref)
    tested = c.comparable
    return {
        "case": row.case,
        "base": value_text(c.base, unit, div),
        "other": value_text(c.other, unit, div),
        "unit": unit,
        "change": c.change_text if tested else "-",
        "ratio": "-" if math.isnan(c.ratio) or not tested else f"{c.ratio:.3f}",
        "ci": c.ci_text,
        "p": _p_text(c.q if not math.isnan(c.q) else c.p),
        "mde": c.mde_text,
        "reps": f"{c.base_reps}/{c.other_reps}",
        "verdict": c.verdict + (f" ({c.not_judged_kind})" if c.not_judged_kind else "")
        + (" (?)" if c.unresolved else "") + (" (alone)" if c.alone else "")
        + (" (modes)" if c.modes else "")
        + (f" {c.failure}" if c.failure else "")
        + (f" (waiting {waiting * 100:.0f}%)" if waiting is not None else ""),
    }


def _p_text(p):
    if p is None or math.isnan(p):
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def shift_lines(rep, opts):
    """The control cases' verdict on the machine, for the top of a report."""
    sh = rep.shift
    if sh is None:
        return ["note: no control cases on both sides (runs made before kbench had them): a shift of the "
                "whole machine between the runs cannot be told from a change of the kernel."]
    out = []
    if sh.relative:
        mem = (f", the memory controls {_or_na(sh.memory_change_text)} (against the CPU speed: "
               + ", ".join(f"{n} {stats.change_text(stats.speed_change(math.exp(v), 'latency'))}"
                           for n, v in zip(sh.memory_names, sh.dx[1:])) + ")") if sh.memory_names else ""
        ran = sh.speed_change_text
        ran = (f"at the same speed during {rep.other.label} as during {rep.base.label}" if ran == "same" else
               f"{_or_na(ran)} during {rep.other.label} than during {rep.base.label}")
        out.append(f"Machine state: the CPU controls ran {ran}{mem}. The CPU- and memory-bound cases are judged relative to "
                   f"them (each case as far as the host's runs show it follows them; the values shown at "
                   f"{rep.base.label}'s state; --as-measured judges them as measured); a move beyond what this "
                   f"host's runs have shown (the CPU speed {sh.limit_text(0)}) is a machine shift.")
    else:
        out.append(f"Machine check: the CPU controls ran {_or_na(sh.change_text)}, the memory controls "
                   f"{_or_na(sh.memory_change_text)} during {rep.other.label} than during {rep.base.label}; every "
                   f"case is judged as measured (--as-measured).")
    if sh.shifted:
        why = sh.why("cpu")
        out.append(f"WARNING: MACHINE SHIFT. {why[0].upper()}{why[1:]}: the machine changed more than its speed "
                   f"between the sides, and no case is called faster or slower on this evidence. Run both "
                   f"kernels again, interleaved, on a quieter machine.")
    elif sh.memory_shifted:
        out.append(f"WARNING: MEMORY SHIFT. {sh.why('memory')}: the memory-bound cases "
                   f"(those their binaries declare so) are not judged; the others are.")
    cells = [row_cells(r) for r in sh.rows + sh.memory_rows]
    keys = ["case", "base", "other", "unit", "change", "ci", "p", "reps", "verdict"]
    out.append(table(["control", "base", "other", "unit", "change", f"{opts.level * 100:.0f}% CI", "p", "reps",
                      "moved?"], [[c[k] for k in keys] for c in cells], right={1, 2, 7}))
    return out


def _or_na(text):
    return "n/a" if text == "-" else text


def run_effect_lines(rep):
    """Runs of one side that disagree beyond their reps (drift between runs)."""
    out = []
    for side, attr in ((rep.base, "base_run_p"), (rep.other, "other_run_p")):
        if len(side.runs) < 2:
            continue
        ps = [getattr(r.cmp, attr) for r in rep.rows if not math.isnan(getattr(r.cmp, attr))]
        if not ps:
            continue
        qs = stats.bh_adjust(ps)
        n = int(sum(q < 0.05 for q in qs))
        raw = int(sum(p < 0.05 for p in ps))
        if n:
            out.append(f"WARNING: the {len(side.runs)} runs of {side.label} disagree on {n} of {len(ps)} cases "
                       f"beyond their reps' noise ({raw} at p < 0.05 before adjusting; about {0.05 * len(ps):.0f} "
                       f"expected by chance): the machine drifted between runs. Those cases' intervals treat the "
                       f"run as the unit (wider, honest).")
        else:
            out.append(f"Runs of {side.label}: {len(side.runs)}, no case differs between them beyond its reps' "
                       f"noise after adjusting ({raw} of {len(ps)} at p < 0.05, about {0.05 * len(ps):.0f} "
                       f"expected by chance).")
    return out


def run_level_lines(rep, opts):
    """What the intervals hold about the drift of the machine between runs."""
    noise = noise_of(rep.base, rep.other, opts)
    one = len(rep.base.runs) == 1 or len(rep.other.runs) == 1
    kind, text = run_level_source(noise)
    if kind == "none":
        if not one:
            return []
        return ["note: one run on a side, no kernel with two runs on this host and no prior (--no-prior): the "
                "intervals hold the noise between reps only, not the drift of the machine between runs; on a "
                "machine that drifts they are too narrow. Two runs of any one kernel on this host measure that "
                "drift."]
    sds = sorted(r.cmp.run_sd for r in rep.rows if r.cmp.comparable and not math.isnan(r.cmp.run_sd))
    spread = ""
    if sds:
        spread = (f" A run's own drift: median over cases {math.expm1(sds[len(sds) // 2]) * 100:.1f}%, "
                  f"90th percentile {math.expm1(sds[int(0.9 * (len(sds) - 1))]) * 100:.1f}%.")
    now = scale_text(rep.scale) if rep.scale else ""
    boot_note = boots_text(noise)[1] if noise.measured else ""
    return [f"Run level ({kind}): {text}{'; ' + now if now else ''}.{spread} Each interval adds it for a side's "
            f"number of runs, so the mde is what {'one run a side' if one else 'these runs'} can tell on this "
            f"machine.{follow_text(rep.follow)}{bulk_text(rep.bulk)}{sessions_text(rep.sessions)}{boot_note}"]


def drift_basis(noise):
    """How the plan of more runs assumes the host drifts (the same words in
    compare, summarize and the page)."""
    kind = run_level_source(noise)[0]
    if kind == "prior":
        return "as the built-in prior assumes, scaled as these runs measured it"
    if kind == "host":
        return "as its runs measured, weighed against the built-in prior"
    return "as it did"


def adjustment_text(rows):
    """How p was adjusted: per family (compare, summarize and the page say it alike)."""
    fams = {}
    for r in rows:
        if not math.isnan(r.cmp.q):
            fams[r.cmp.family] = fams.get(r.cmp.family, 0) + 1
    if len(fams) <= 1:
        return f"adjusted for the {sum(fams.values())} cases compared"
    prim = {f: n for f, n in fams.items() if f.startswith(stats.PRIMARY)}
    if len(prim) == 1:
        return (f"adjusted within two families: the {sum(prim.values())} cases behind the summary tables "
                f"(primary) and the {fams.get(stats.SECONDARY, 0)} others (secondary), each on its own")
    return (f"adjusted within families, each for its own number of cases: the cases behind each summary table "
            f"(primary: {len(prim)} tables, {min(prim.values())}-{max(prim.values())} cases each, "
            f"{sum(prim.values())} in all) and the {fams.get(stats.SECONDARY, 0)} others (secondary)")


PLAN_RUNS = defaults.PLAN_RUNS


def more_runs_lines(rep, opts):
    """What more runs of each kernel would buy, from the host's run level:
    the median mde with 1, 2, 4 and 8 runs a side, and how many runs a
    side the cases need to detect the minimum effect.  Nothing without a
    run level (then more runs of the same moment would only narrow the
    reps' part, and this plan would promise too much)."""
    live = [r.cmp for r in rep.rows if r.cmp.comparable and r.cmp.parts]
    if not live:
        return []
    meds = [f"{stats.mde_text(m)} with {k}"
            for k, m in stats.planned_medians([c.parts for c in live], PLAN_RUNS, opts.level)]
    need = [c.runs_for(opts.min_effect, level=opts.level) for c in live]
    bins, lo = [], 0
    for k in PLAN_RUNS:
        n = sum(1 for x in need if x is not None and lo < x <= k)
        bins.append(f"{k if lo + 1 == k else f'{lo + 1}-{k}'}: {n}")
        lo = k
    bins.append(f"more than {PLAN_RUNS[-1]}: {sum(1 for x in need if x is None or x > PLAN_RUNS[-1])}")
    return [f"More runs: each kernel run again at other moments and pooled narrows the drift between runs too. "
            f"If this host drifts {drift_basis(noise_of(rep.base, rep.other, opts))}, the median mde would be "
            f"{', '.join(meds)} run(s) a side. Cases by "
            f"the runs a side they need to detect {opts.min_effect * 100:g}% (--min-effect): {'; '.join(bins)} "
            f"(each case's in the CSV's runs_for_min_effect)."]


# Fewer reps than FEW_REPS in a side's one run: the note below (a case with
# a fast and a slow mode can have all of a run's reps in one mode).
FEW_REPS = defaults.FEW_REPS


ENOUGH_REPS = defaults.ENOUGH_REPS


def few_reps_lines(rep):
    """A note when a side is one run whose cases have, in the median, fewer
    than FEW_REPS reps: what such a comparison's single flags are worth."""
    rows = [r.cmp for r in rep.rows if r.cmp.comparable]
    few = []
    for side, reps, runs in ((rep.base, [c.base_reps for c in rows], [c.base_runs for c in rows]),
                             (rep.other, [c.other_reps for c in rows], [c.other_runs for c in rows])):
        if reps and max(runs) <= 1:
            n = sorted(reps)[len(reps) // 2]
            if n < FEW_REPS:
                few.append(f"{side.label} {n}")
    if not few:
        return []
    return [f"note: few reps in one run ({', '.join(few)} reps a case, the median): where the machine's speed "
            f"moves during a run, all of a run's reps of a case can land in its slow (or fast) mode, which its "
            f"reps cannot tell from a change: a single case flagged is less sure than with {ENOUGH_REPS} reps. "
            f"kbench-run --reps {ENOUGH_REPS} a side (or a full run) makes that rare (src/reference/reports.md, quick runs)."]


def one_run_lines(rep):
    """A note when a case or a summary cell is flagged with one run on a
    side: what such a flag rests on, and what tells."""
    cmps = [r.cmp for r in rep.rows] + [c for c, _, _ in rep.cells.values()]
    n = sum(c.significant and c.one_run for c in cmps)
    if not n:
        return []
    return [f"One run a side: {n} flag(s) rest on one run of a side. A case can jump for a whole run "
            f"(a cache-sized working set where the shared cache is contended), which one run cannot tell from a "
            f"change: run each side again (runs pooled) to confirm."]


def nothing_tested_line(rep, opts):
    """The one line that replaces the model's description when no case
    could be tested."""
    few = sum(r.cmp.verdict == stats.FEW for r in rep.rows)
    why = (f"every case has fewer than {opts.min_reps} reps on a side (--min-reps; a quick run has 2, "
           f"make run 5 or more)" if few == len(rep.rows) else
           f"every case has fewer than {opts.min_reps} reps on a side or is missing from one" if few else
           "no case has values on both sides")
    return f"Nothing could be tested: {why}; no change is shown."


def format_report(rep, changed_only=False, opts=None):
    """The terminal text of one comparison."""
    opts = opts or Options()
    out = []
    out.append(f"Comparing {rep.other.label} ({len(rep.other.runs)} run(s), {rep.other.n_reps} reps) "
               f"against baseline {rep.base.label} ({len(rep.base.runs)} run(s), {rep.base.n_reps} reps)")
    if rep.kernel:
        out.append("The kernels: " + "; ".join(f"{k} {a} -> {b}" for k, a, b in rep.kernel))
    arch = arch_warning([(rep.base.label, rep.base.meta), (rep.other.label, rep.other.meta)])
    if arch:
        out.append(arch)
    for side in (rep.base, rep.other):
        if side.quick:
            out.append(quick_note(side.label, len(side.runs)))
    out += few_reps_lines(rep)
    out += shift_lines(rep, opts)
    tested = any(r.cmp.comparable for r in rep.rows)
    out.append("")
    if tested:
        adj = (", " + adjustment_text(rep.rows)) if opts.adjust else ""
        out.append(f"value = {ESTIMATOR_TEXT.get(opts.estimator, opts.estimator)}; ratio = other/base (time for "
                   f"latency, MB/s for bandwidth); the {opts.level * 100:.0f}% CI and p come from one model (the "
                   f"runs' estimates of log values, the drift between runs, the controls as covariates, t){adj}.")
        out.append(f"Faster/slower = p < {1 - opts.level:.2g} and a change of at least {opts.min_effect * 100:g}%. "
                   f"mde = the smallest change this comparison could detect (80% power); 'inconclusive' = not "
                   f"significant, and the mde is above {opts.min_effect * 100:g}%: more reps would tell.")
        out += run_level_lines(rep, opts)
        out += more_runs_lines(rep, opts)
    else:
        out.append(nothing_tested_line(rep, opts))
    out += run_effect_lines(rep)
    if rep.differences:
        out.append("")
        out.append("WARNING: the two sides differ in more than the kernel:")
        for k, a, b in rep.differences:
            out.append(f"  {k}: {a}  ->  {b}" + ("  (emulated timings are not comparable with native ones)"
                                                  if k == "virt" and "emulated" in (a, b) else
                                                  "  (A DIFFERENT ARCHITECTURE: not the kernel's change alone)"
                                                  if k == "arch" else ""))
    if rep.ran_differently:
        out.append("")
        out.append("Cases that ran differently on the two sides:")
        out += [f"  {line}" for line in rep.ran_differently]
    failed = [r for r in rep.rows if r.cmp.verdict == stats.FAILED]
    if failed:
        out.append("")
        out.append(f"FAILED: {len(failed)} case(s) failed, timed out or crashed (their samples are not used):")
        out += [f"  {r.case}: {r.cmp.failure}" for r in failed]
    waiting = rep.waiting
    if waiting:
        out.append("")
        out.append(f"(waiting N%): {len(waiting)} one-party case(s) spent more than half their time blocked (I/O, a "
                   "journal commit, a lock) on a side: their change is how long something made them wait (the "
                   "disk, the file system's mount options), not the cost of the kernel's path.")
    headers = ["case", "base", "other", "unit", "change", "ratio", f"{opts.level * 100:.0f}% CI", "p", "mde",
               "reps", "verdict"]
    keys = ["case", "base", "other", "unit", "change", "ratio", "ci", "p", "mde", "reps", "verdict"]
    numeric = {1, 2, 5, 8, 9}   # the columns set right
    counts = {}
    for cat in in_order(r.category for r in rep.rows):
        rows = [r for r in rep.rows if r.category == cat]
        for r in rows:
            counts[r.cmp.verdict] = counts.get(r.cmp.verdict, 0) + 1
        if changed_only:
            rows = [r for r in rows if r.cmp.flagged]
        if not rows:
            continue
        lat = {r.metric for r in rows}
        direction = " / ".join(stats.direction_text(m) for m in sorted(lat, key=lambda m: m != "latency"))
        out.append("")
        out.append(f"== {cat} ({direction})")
        cells = [row_cells(r, waiting.get(r.case)) for r in rows]
        out.append(table(headers, [[c[k] for k in keys] for c in cells], right=numeric))
    cell_rows = []
    for key, (c, _, _) in sorted(rep.cells.items()):
        if c.comparable and (c.flagged or not changed_only):
            _, title, label = key.split(":", 2)      # compare.cell_key
            cell_rows.append([row_cells(Row(f"{label} [{title}]", "", c.metric, c))[k] for k in keys])
    if cell_rows:
        out.append("")
        out.append("== summary-table cells made of several cases (a mean, a difference, a time per event), "
                   "judged with the cases")
        out.append(table(headers, cell_rows, right=numeric))
    crows = []
    for r in rep.rows:
        if (changed_only and not r.cmp.significant) or not r.cmp.comparable:
            continue
        for k, a, b, pct in counter_changes(rep.base.cases.get(r.case), rep.other.cases.get(r.case)):
            crows.append([r.case, COUNTER_LABELS[k], counter_fmt(a), counter_fmt(b), counter_fmt_change(pct)])
    if crows:
        out.append("")
        out.append("== counters per operation (median over reps; the time's verdict above is the one that "
                   "counts: counters explain it)")
        out.append(table(["case", "counter", "base", "other", "change"], crows, right={2, 3}))
    out.append("")
    order = [stats.FAILED, stats.FASTER, stats.SLOWER, stats.NOT_JUDGED, stats.SAME, stats.INCONCLUSIVE, stats.FEW, stats.MISSING,
             stats.UNDEFINED]
    out.append("Summary: " + ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v)))
    live = [r.cmp for r in rep.rows if r.cmp.comparable and not math.isnan(r.cmp.mde)]
    if live:
        mdes = sorted(c.mde for c in live)
        med = mdes[len(mdes) // 2]
        within = sum(m <= opts.min_effect for m in mdes)
        out.append(f"Power: median mde {med * 100:.1f}%; {within} of {len(mdes)} cases could detect a "
                   f"{opts.min_effect * 100:g}% change.")
    if changed_only and not any(r.cmp.flagged for r in rep.rows):
        out.append("No case changed significantly.")
    out += one_run_lines(rep)
    out += not_judged_lines(rep.rows, changed_only)
    n_unres = sum(r.cmp.unresolved for r in rep.rows)
    if n_unres:
        out.append(f"(?) {n_unres} case(s): p < {1 - opts.level:.2g} and the change is large enough, but not "
                   f"significant after adjusting for the number of cases: more reps (pool several runs) or "
                   f"fewer cases (--only) would tell.")
        if changed_only:
            out += [f"    {r.case}: {r.cmp.change_text}, CI {r.cmp.ci_text}" for r in rep.rows if r.cmp.unresolved]
    out += _listed([r for r in rep.rows if r.cmp.alone],
                   lambda n: f"(alone) {n} case(s) outside the summary tables (or of a file-system-bound binary) "
                             f"changed significantly, each the only case of its binary to move, with one run on a "
                             f"side: inconclusive, because one run can jump that far for the whole run, one case at "
                             f"a time. Measure that side again (runs pooled) to tell; --flag-alone judges them like "
                             f"any other case.",
                   lambda c: f"CI {c.ci_text}")
    out += _listed([r for r in rep.rows if r.cmp.modes],
                   lambda n: f"(modes) {n} case(s) changed significantly at the fast end of their reps while their "
                             f"median or their fastest rep did not follow: inconclusive, because the reps fall into "
                             f"a fast and a slow mode and the sides drew a different mix of them; a change of the "
                             f"path moves both. More runs of each side would tell.",
                   lambda c: f"median rep {stats.change_text(stats.speed_change(c.mid_ratio, c.metric))}"
                             + (f", fastest rep {stats.change_text(stats.speed_change(c.fast_ratio, c.metric))}"
                                if c.fast_ratio > 0 else ""))
    return "\n".join(out)


def not_judged_reasons(rows):
    """{reason: [case names]} of the rows not judged, in the order met."""
    out = {}
    for r in rows:
        if r.cmp.verdict == stats.NOT_JUDGED:
            out.setdefault(r.cmp.not_judged, []).append(r.case)
    return out


def not_judged_lines(rows, listed=False):
    """The footnote of the cases not judged: how many, and why (each reason
    once); listed: also every case's name (compare --changed, whose tables
    leave them out)."""
    out = []
    for reason, cases in not_judged_reasons(rows).items():
        out.append(f"(not judged) {len(cases)} case(s) not judged ({reason}): a change of these cases may be the "
                   f"machine's as well as the kernel's, so none is called faster or slower, and more reps cannot "
                   f"tell them apart (run both kernels again, interleaved).")
        if listed:
            out += [f"    {c}" for c in cases]
    return out


def _listed(rows, head, detail):
    """The lines of a footnote of flagged-but-inconclusive rows: head(their
    number), then each case with its change and detail(its comparison);
    nothing without rows."""
    if not rows:
        return []
    return [head(len(rows))] + [f"    {r.case}: {r.cmp.change_text}, {detail(r.cmp)}" for r in rows]
