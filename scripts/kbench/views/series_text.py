"""The terminal text, CSV and JSON of a series of kernels (summarize and
compare --series)."""
import csv
import json
import math
import textwrap

from ..model import compare, stats
from . import export
from .compare_text import not_judged_reasons, run_level_source
from .text import table


def change_words(ch, result):
    """'15.0% slower' (or the failure) of a change."""
    if ch.cmp.verdict == stats.FAILED:
        return f"FAILED {ch.cmp.failure}".strip()
    return ch.cmp.change_text


def stayed_words(ch, result):
    """Whether a change stayed, in words."""
    if ch.stayed == "unknown":
        return "not known: the last kernel of the series"
    after, before = result.label(ch.index + 1), result.label(ch.index - 1)
    s = ch.stay_cmp
    told = (f"{after} against {before}: {s.change_text if s.comparable else s.verdict}"
            + (f", {s.ci_text}" if s.comparable and s.ci_text != "-" else "")) if s is not None else \
        f"{after}: not measured"
    if ch.stayed == "yes":
        return f"stayed ({told})"
    if ch.stayed == "back":
        return f"went back at {after} ({ch.back.change_text}); {told}"
    if ch.stayed == "unjudged":
        sh = ch.stay_shift
        ran = (f"the control cases ran {sh.change_text}" if sh.shifted else
               f"the memory control ran {sh.memory_change_text}")
        return (f"cannot tell: {ran} on {after} than on {before}, a machine shift "
                f"({after} against {before}: {s.change_text}, {s.ci_text}, not judged)")
    return f"did not stay ({told}, {s.verdict if s is not None else 'missing'})"


def _ratio_text(cmp):
    return "-" if math.isnan(cmp.ratio) else f"{cmp.ratio:.3f}"


def adjustment_lines(result, opts):
    """How the series was judged: the steps adjusted together."""
    n = len(result.steps)
    rows = [r for st in result.steps for r in st.rows]
    live = [r for r in rows if not math.isnan(r.cmp.q)]
    fams = {}
    for r in live:
        fams[r.cmp.family] = fams.get(r.cmp.family, 0) + 1
    how = (f"adjusted within {len(fams)} families (each summary table's cases, the other cases)" if len(fams) > 1
           else "adjusted for every case")
    if not opts.adjust:
        how = "each case judged on its own (--no-adjust)"
    return [f"Each kernel is compared with the one before it, with compare's statistics; the {n} step(s) are "
            f"judged together ({len(live)} tests), {how} over all the steps at once, so that the {n} chances "
            f"of a false step do not add up. Faster/slower = p < {1 - opts.level:.2g} after that and a change of "
            f"at least {opts.min_effect * 100:g}%. Stayed = the kernel after the change against the kernel before "
            f"it changed the same way."]


def format_series(result, opts):
    """The terminal text of a series."""
    out = []
    names = " < ".join(g.label for g in result.groups) if not result.left_out else \
        " , ".join(g.label for g in result.groups)
    out.append(f"Series of {len(result.groups)} kernels: {names}")
    if result.left_out:
        out.append("Left out (not in --order): " + ", ".join(g.label for g in result.left_out))
    if len(result.groups) < 2:
        out.append("A series needs two kernels or more: nothing to compare.")
        return "\n".join(out)
    out += adjustment_lines(result, opts)
    noise = compare.noise_of(result.sides[0], result.sides[-1], opts)
    kind, text = run_level_source(noise)
    out.append(f"Run level ({kind}): {text}.")
    for st in result.steps:
        if st.shift is not None and st.shift.shifted:
            out.append(f"WARNING: MACHINE SHIFT between {st.base.label} and {st.other.label}: "
                       f"{st.shift.why('cpu')}; no case is called faster or slower at that step.")
        elif st.shift is not None and st.shift.memory_shifted:
            out.append(f"WARNING: MEMORY SHIFT between {st.base.label} and {st.other.label}: the memory-bound "
                       f"cases are not judged at that step.")
    out.append("")
    out.append("== Steps")
    srows = []
    for st in result.steps:
        counts = {}
        for r in st.rows:
            counts[r.cmp.verdict] = counts.get(r.cmp.verdict, 0) + 1
        srows.append([st.base.label, st.other.label, str(counts.get(stats.SLOWER, 0)),
                      str(counts.get(stats.FASTER, 0)), str(counts.get(stats.FAILED, 0)),
                      str(counts.get(stats.SAME, 0)), str(counts.get(stats.INCONCLUSIVE, 0)),
                      str(counts.get(stats.NOT_JUDGED, 0))])
    out.append(table(["from", "to", "slower", "faster", "failed", "same", "inconclusive", "not judged"], srows,
                     right={2, 3, 4, 5, 6, 7}))
    for st in result.steps:
        for reason, cases in not_judged_reasons(st.rows).items():
            out.append(textwrap.fill(f"Not judged at {st.base.label} -> {st.other.label}, {reason} "
                                     f"({len(cases)} cases):", 100, subsequent_indent="    "))
            out += _names_wrapped(cases)
    out.append("")
    if not result.changes:
        out.append("Where it changed: nowhere. No case changed significantly at any step.")
        return "\n".join(out)
    out.append(f"== Where it changed ({len(result.changes)} change(s), largest first)")
    rows = []
    for ch in result.changes:
        rows.append([ch.case, result.label(ch.index), result.label(ch.index - 1), change_words(ch, result),
                     _ratio_text(ch.cmp), ch.cmp.ci_text, stayed_words(ch, result)])
    out.append(table(["case", "changed at", "from", "change", "ratio", f"{opts.level * 100:.0f}% CI", "stayed?"],
                     rows, right={4}))
    return "\n".join(out)


def _names_wrapped(names, width=100, indent="    "):
    """Case names, comma-separated, on lines of at most width columns, a
    name never split (names hold spaces)."""
    lines, line = [], ""
    for i, n in enumerate(names):
        item = n + ("," if i < len(names) - 1 else "")
        if line and len(indent) + len(line) + 1 + len(item) > width:
            lines.append(indent + line)
            line = item
        else:
            line = f"{line} {item}" if line else item
    return lines + ([indent + line] if line else [])


CSV_FIELDS = ["case", "category", "metric", "kernel", "previous", "position", "change", "change_pct", "ratio",
              "ci_low", "ci_high", "p_adjusted", "verdict", "family", "stayed", "after", "after_change_pct",
              "after_ratio", "after_ci_low", "after_ci_high", "after_verdict", "back_change_pct"]


def change_rows(result):
    """One dict per change, the CSV's fields (numbers as numbers, None for none)."""
    for ch in result.changes:
        c, s = ch.cmp, ch.stay_cmp
        yield {
            "case": ch.case, "category": ch.category, "metric": ch.metric, "kernel": result.label(ch.index),
            "previous": result.label(ch.index - 1), "position": ch.index, "change": change_words(ch, result),
            "change_pct": _num(c.change), "ratio": _num(c.ratio), "ci_low": _num(c.lo), "ci_high": _num(c.hi),
            "p_adjusted": _num(c.q), "verdict": c.verdict, "family": c.family, "stayed": ch.stayed,
            "after": result.label(ch.index + 1) if ch.index + 1 < len(result.groups) else None,
            "after_change_pct": _num(s.change) if s is not None else None,
            "after_ratio": _num(s.ratio) if s is not None else None,
            "after_ci_low": _num(s.lo) if s is not None else None,
            "after_ci_high": _num(s.hi) if s is not None else None,
            "after_verdict": s.verdict if s is not None else None,
            "back_change_pct": _num(ch.back.change) if ch.back is not None else None,
        }


def _num(v):
    return None if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))) else v


def write_csv(result, f):
    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
    w.writeheader()
    for row in change_rows(result):
        w.writerow({k: ("" if v is None else f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})


def write_json(result, f):
    doc = {
        "kernels": [g.label for g in result.groups],
        "left_out": [g.label for g in result.left_out],
        "steps": [{"from": st.base.label, "to": st.other.label,
                   "machine_shift": bool(st.shift and st.shift.shifted),
                   "memory_shift": bool(st.shift and st.shift.memory_shifted),
                   "machine_moved": bool(st.shift and st.shift.cpu_moved),
                   "verdicts": _counts(st.rows),
                   "not_judged": [{"case": r.case, "reason": r.cmp.not_judged} for r in st.rows
                                  if r.cmp.verdict == stats.NOT_JUDGED],
                   # every case of the step, as compare --json has them
                   "rows": export.json_rows(st.base.label, st.other.label, st.shift, st.rows, result.opts,
                                            compare.waiting_shares(st))} for st in result.steps],
        "changes": list(change_rows(result)),
    }
    json.dump(doc, f, indent=1, ensure_ascii=False)
    f.write("\n")


def _counts(rows):
    out = {}
    for r in rows:
        out[r.cmp.verdict] = out.get(r.cmp.verdict, 0) + 1
    return out
