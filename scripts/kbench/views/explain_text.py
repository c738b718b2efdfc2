"""The words of compare --explain: the terminal text, the JSON and the
page's section of the kernel profiles' explanations (model/explain.py)."""
import math

from .text import table


def _pct(x):
    return "—" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def _ns(x):
    if x is None or math.isnan(x):
        return "—"
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}" if abs(x) >= 1 else f"{x:.2f}"


def _signed_ns(x):
    return "—" if x is None or math.isnan(x) else ("+" if x > 0 else "") + _ns(x)


def _count(x):
    if x == 0:
        return "0"
    return f"{x:.4g}"


def _factor_text(r):
    f = r.factor
    if math.isinf(f):
        return "appeared" if r.base == 0 else "gone"
    if f < 0:
        return "sign reversed"
    return f"×{f:.2f}"


def function_cells(r):
    return [r.name, r.space, _pct(r.base), _pct(r.other), f"{r.points:+.1f}", _ns(r.base_ns), _ns(r.other_ns),
            _signed_ns(r.delta_ns)]


FUNCTION_HEADERS = ["function", "space", "base", "other", "change pt", "base ns/op", "other ns/op", "Δ ns/op"]


EVENT_HEADERS = ["event per op", "base", "other", "change"]


def event_cells(r):
    return [r.name, _count(r.base), _count(r.other), _factor_text(r)]


def heading(e):
    bits = [f"{e.case}: {e.verdict}" + (f" ({e.change_text})" if e.change_text else "")]
    if e.metric == "latency" and not math.isnan(e.base_ns) and not math.isnan(e.other_ns):
        bits.append(f"{_ns(e.base_ns)} -> {_ns(e.other_ns)} ns/op")
    return "; ".join(bits)


def profile_line(e):
    def one(label, p):
        if p is None:
            return f"{label}: no profile (run with kbench-run --profile)"
        if p.missing:
            return f"{label}: no profile ({p.missing})"
        ks = "" if math.isnan(p.kernel_share) else f", {_pct(p.kernel_share)} in the kernel"
        return f"{label}: {p.samples} {p.event} samples{ks}"
    return "; ".join([one(e.base_label, e.base), one(e.other_label, e.other)])


def format_explanations(expls, base_label="base", other_label="other"):
    """The terminal text of --explain."""
    out = [f"== Why it changed: the kernel profiles of {other_label} against {base_label} (kbench-run --profile)",
           "share = of all perf samples of the case's profiled run (the function itself, not what it calls); "
           "ns/op = share x the time per operation (the headline value; for bandwidth the profiled run's); "
           "functions ranked by the change of their share; — = not among the functions listed on that side."]
    if not expls:
        out.append("No case to explain: none was flagged and none has a profile on both sides.")
        return "\n".join(out)
    for e in expls:
        out.append("")
        out.append(heading(e))
        out.append("  " + profile_line(e) + (f" (time per op from the {e.time_source})"
                                               if e.time_source != "headline" else ""))
        if e.functions:
            out.append(_indent(table(FUNCTION_HEADERS, [function_cells(r) for r in e.functions],
                                     right={2, 3, 4, 5, 6, 7})))
        if e.inclusive:
            out.append("  inclusive (the function and everything it calls):")
            out.append(_indent(table(FUNCTION_HEADERS, [function_cells(r) for r in e.inclusive],
                                     right={2, 3, 4, 5, 6, 7})))
        if e.events:
            out.append(_indent(table(EVENT_HEADERS, [event_cells(r) for r in e.events], right={1, 2, 3})))
        elif e.base and e.other:
            out.append("  kernel event counts per op: none moved by 25% or more")
    return "\n".join(out)


def _json_num(x):
    return None if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else x


def _profile_json(p):
    if p is None:
        return None
    return {"samples": p.samples, "kernel_share": _json_num(p.kernel_share), "event": p.event or None,
            "runs": p.runs, "ns_per_op": _json_num(p.ns_per_op), "missing": p.missing or None}


def _function_json(r):
    return {"name": r.name, "space": r.space, "base_share": _json_num(r.base), "other_share": _json_num(r.other),
            "points": _json_num(r.points), "base_ns": _json_num(r.base_ns), "other_ns": _json_num(r.other_ns),
            "delta_ns": _json_num(r.delta_ns)}


def to_json(e):
    """One Explanation as plain JSON values (compare --explain --json):
    shares are fractions of all samples, times in ns per operation, a
    factor of null means the event appeared or went (one side is 0)."""
    return {
        "case": e.case, "verdict": e.verdict, "change": e.change_text, "metric": e.metric,
        "complete": e.complete, "time_source": e.time_source,
        "base_ns_per_op": _json_num(e.base_ns), "other_ns_per_op": _json_num(e.other_ns),
        "base_profile": _profile_json(e.base), "other_profile": _profile_json(e.other),
        "functions": [_function_json(r) for r in e.functions],
        "inclusive": [_function_json(r) for r in e.inclusive],
        "events": [{"name": r.name, "base": _json_num(r.base), "other": _json_num(r.other),
                    "factor": _json_num(r.factor)} for r in e.events],
    }


def _indent(text, n=2):
    return "\n".join(" " * n + ln for ln in text.splitlines())


def html_section(expls, esc, case_anchor=None, title="Why it changed: kernel profiles", section_id="explain"):
    """The page's section for these explanations (HTML text; '' if none).
    esc: the page's escaping function; case_anchor(case) -> id or None."""
    if not expls:
        return ""
    parts = [f'<section id="{esc(section_id)}"><h2>{esc(title)}</h2>',
             "<p>For each changed case with profiles (<code>kbench-run --profile</code>) on both kernels: the "
             "functions whose share of the perf samples changed most, the time per operation attributed to "
             "them (share × the time per operation), and the kernel event counts per operation that moved. "
             "— = not among the functions listed on that side.</p>"]
    for e in expls:
        anchor = case_anchor(e.case) if case_anchor else None
        title = esc(heading(e))
        if anchor:
            title = f'<a href="#{esc(anchor)}">{title}</a>'
        parts.append(f'<h3 class="explain-case">{title}</h3>')
        parts.append(f"<p>{esc(profile_line(e))}</p>")
        for caption, rows in (("functions (self)", e.functions), ("inclusive (with what they call)", e.inclusive)):
            if not rows:
                continue
            parts.append(f'<table class="explain"><caption>{esc(caption)}</caption><tr>'
                         + "".join(f"<th>{esc(h)}</th>" for h in FUNCTION_HEADERS) + "</tr>")
            for r in rows:
                cls = "s1" if r.delta_ns > 0 else "f1" if r.delta_ns < 0 else ""
                cells = function_cells(r)
                parts.append("<tr>" + "".join(
                    f'<td class="{cls if i >= 4 else ""}{"" if i < 2 else " num"}">{esc(c)}</td>' for i, c in enumerate(cells)) + "</tr>")
            parts.append("</table>")
        if e.events:
            parts.append('<table class="explain"><caption>kernel events per operation</caption><tr>'
                         + "".join(f"<th>{esc(h)}</th>" for h in EVENT_HEADERS) + "</tr>")
            for r in e.events:
                parts.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in event_cells(r)) + "</tr>")
            parts.append("</table>")
    parts.append("</section>")
    return "\n".join(parts)
