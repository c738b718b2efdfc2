"""What every section of the HTML page shares: escaping, the style and
script, the words and colours of a compared cell, and the charts embedded
as data: URIs.  Every string that comes from a result file goes through
`esc`."""
import base64
import html as _html
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..model import stats
from .units import fmt_num


def esc(s):
    return _html.escape(str(s), quote=True)


def label_html(label):
    """A kernel's label, escaped, that may break after its host's '/' and
    before its '[label]' (a summary table's first column stays narrow)."""
    return esc(label).replace("/", "/<wbr>").replace("[", "<wbr>[")


@dataclass
class Model:
    groups: list                 # load.Group, in display order
    baseline: object             # the baseline Group
    tables: list                 # tables.Table
    comparisons: dict            # other group key -> (rows, cells, runmodel.Fit.bulk)
    opts: object                 # compare.Options
    bars: object = field(default_factory=dict)   # category -> [paths], or what gives it (result(): charts.Background)
    strips: dict = field(default_factory=dict)   # case -> path (None: later gives it)
    curves: dict = field(default_factory=dict)   # name -> [paths]
    warnings: list = field(default_factory=list)
    generated: str = ""
    shifts: dict = field(default_factory=dict)   # other group key -> compare.MachineShift or None
    series: object = None                        # series.Result (report --series) or None
    bisect: list = field(default_factory=list)   # [(log path, [step dict])] (report --bisect)
    # made beforehand from the runs alone (None: made while rendering): html.run_traces, scaling_text.html_kernels
    traces: dict = None
    scaling: list = None
    # or what gives them, still being drawn (result(): (curves, strips, scaling, traces), charts.page_parts):
    # render makes the sections that need none of them first
    later: object = None


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:1.5em auto;
max-width:1400px;padding:0 1em;color:#1b1b1b;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ccc}
h3{font-size:1.05em;margin-bottom:.3em}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.88em}
th,td{border:1px solid #d0d0d0;padding:.25em .5em;vertical-align:top}
th{background:#f1f1f1;text-align:left;font-weight:600}
th small,td small{display:block;font-weight:normal;color:#555;font-size:.8em}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.num small{white-space:normal}span.ci{white-space:nowrap}
td.k{font-weight:600}
.f1{background:#deebf7}.f2{background:#9ecae1}.f3{background:#4a98d3}
.s1{background:#fee6ce}.s2{background:#fdae6b}.s3{background:#f2711c}
.fail{background:#7f2704;color:#fff;font-weight:600}.fail small{color:#fff}
.few{color:#777;font-style:italic}.unres{outline:2px dotted #6a3d9a;outline-offset:-3px}.miss{color:#999;text-align:center}
.nj{color:#555;background:#ececec}.wide{color:#777;background:repeating-linear-gradient(135deg,#fff 0 5px,#ececec 5px 10px)}
td small.w{font-weight:600;color:inherit}td a.v{color:inherit;text-decoration:none}td a.v:hover{text-decoration:underline}
table.score td.num{min-width:3.5em}tr.zero td{color:#999}
body.changed-only table.cases tbody tr:not(.chg){display:none}
body.changed-only .nochg{display:none}div.scroll{overflow-x:auto;max-width:100%}
#filter{position:sticky;top:0;background:#fff;padding:.3em 0;z-index:1}
.base{background:#f6f6fb}
tr.diff td{background:#fff3c4}tr.diff td:first-child{font-weight:600}
.legend span{display:inline-block;padding:.1em .5em;margin:0 .2em;border:1px solid #ccc}
.warn{background:#fff3c4;border:1px solid #e5c95c;padding:.5em 1em}
.note{color:#555;font-size:.9em}
figure{display:inline-block;margin:.5em 1em .5em 0;vertical-align:top}
figure img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:.85em;color:#444}
figure.strips{display:block}figure.strips figcaption{font-weight:600;font-size:.95em}svg.strip{margin:0 .4em .4em 0;border:1px solid #eee}
svg.strip text{font-size:9px;fill:#333}svg.strip text.t{font-size:10px;font-weight:600}
svg.strip text.m{fill:#888}svg.strip line.g{stroke:#e6e6e6}svg.strip line.h{stroke:#000;stroke-width:1.5}
details{margin:.5em 0}summary{cursor:pointer;font-weight:600}
.alarm{background:#fde2e2;border:2px solid #c33;padding:.6em 1em;font-weight:600}
svg.trace{border:1px solid #ddd;background:#fff;margin:.3em 1em .3em 0}
svg.trace text{font-size:10px;fill:#444}
th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999;font-weight:normal}
code{font-size:.92em}
section[id^=explain] h2,h3.explain-case{scroll-margin-top:2.5em}table.explain caption{text-align:left;color:#555}
"""


# Optional: the page reads fully without it.
JS = """
document.querySelectorAll('table.sort').forEach(function(t){
 t.querySelectorAll('th').forEach(function(th,i){
  th.classList.add('sortable');
  th.addEventListener('click',function(){
   var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.asc!=='1';
   th.dataset.asc=asc?'1':'0';
   rows.sort(function(x,y){
    var a=x.cells[i],c=y.cells[i];if(!a||!c)return 0;
    var u=parseFloat(a.dataset.v),v=parseFloat(c.dataset.v);
    if(!isNaN(u)&&!isNaN(v))return asc?u-v:v-u;
    if(!isNaN(u))return -1;if(!isNaN(v))return 1;
    return asc?a.textContent.localeCompare(c.textContent):c.textContent.localeCompare(a.textContent);});
   rows.forEach(function(r){b.appendChild(r);});});});});
function openTo(){var h=decodeURIComponent(location.hash.slice(1)),t=h&&document.getElementById(h),e=t;
 while(e){if(e.tagName==='DETAILS')e.open=true;e=e.parentElement;}if(t)t.scrollIntoView();}
window.addEventListener('hashchange',openTo);openTo();
(function(){var c=document.getElementById('cases');if(!c)return;
 var d=document.createElement('div');d.id='filter';
 d.innerHTML="<label><input type='checkbox'> show only the cases that changed (faster, slower or failed) "+
  "in every case</label>";c.parentNode.insertBefore(d,c.nextSibling);
 d.querySelector('input').addEventListener('change',function(e){
  document.body.classList.toggle('changed-only',e.target.checked);});})();
"""


WIDE_CI = 4.0   # an interval whose ends are more than this factor apart (as from half to twice) judges nothing


def too_wide(cmp):
    """Not significant, and an interval so wide (its ends more than WIDE_CI
    apart, e.g. 0.18..27.4) that the ratio is no number to read: such a
    cell is not coloured, and says so."""
    return (cmp is not None and not cmp.significant and cmp.lo > 0 and not math.isnan(cmp.hi)
            and cmp.hi / cmp.lo > WIDE_CI)


def verdict_class(cmp):
    """CSS class of a cell compared with the baseline."""
    if cmp is None:
        return ""
    if cmp.verdict == stats.FAILED:
        return "fail"
    if cmp.verdict == stats.FEW:
        return "few"
    if cmp.verdict == stats.MISSING:
        return "miss"
    if cmp.verdict == stats.NOT_JUDGED:
        return "nj"
    if too_wide(cmp):
        return "wide"
    if not cmp.significant:
        return "unres" if cmp.unresolved or getattr(cmp, "alone", False) or getattr(cmp, "modes", False) else ""
    mag = abs(cmp.change)
    level = 1 if mag < 10 else 2 if mag < 30 else 3
    return ("f" if cmp.change > 0 else "s") + str(level)


def speed_words(ratio, metric):
    """A change stated the same way for latency and bandwidth: the factor
    of speed ('1.25× slower': 1.25 times the time, or 1/1.25 of the
    throughput) and the % of what was measured ('time +25.0%' or
    'MB/s −20.0%').  ('', '') when there is no ratio."""
    if ratio is None or math.isnan(ratio) or ratio <= 0:
        return "", ""
    lower = stats.lower_is_better(metric)
    speed = 1.0 / ratio if lower else ratio
    pct = (ratio - 1.0) * 100.0
    qty = "time" if lower else "MB/s"
    pct_text = f"{qty} {'+' if pct >= 0 else '−'}{abs(pct):.1f}%"
    if round(speed, 2) == 1.0:
        return "same speed", pct_text
    return (f"{speed:.2f}× faster" if speed > 1 else f"{1 / speed:.2f}× slower"), pct_text


VERDICT_WORD = {stats.FASTER: "faster", stats.SLOWER: "slower", stats.SAME: "no sig. change",
                stats.INCONCLUSIVE: "inconclusive", stats.FEW: "too few reps", stats.NOT_JUDGED: "not judged",
                stats.MISSING: "missing", stats.UNDEFINED: "not comparable", stats.FAILED: "FAILED"}


def cell_words(cmp):
    """What a compared cell says beside its value, without hovering: the
    verdict in words, the factor, the ratio and its interval."""
    if cmp is None:
        return ""
    word = VERDICT_WORD.get(cmp.verdict, cmp.verdict)
    if cmp.unresolved:
        word = "not resolved"
    if getattr(cmp, "alone", False):
        word = "moved alone"
    if getattr(cmp, "modes", False):
        word = "fast reps only"
    if too_wide(cmp) and cmp.verdict != stats.NOT_JUDGED:
        word = "too wide to judge"
    if cmp.verdict == stats.NOT_JUDGED:
        word = f"not judged: {cmp.not_judged_kind}"
    if cmp.significant:
        word = speed_words(cmp.ratio, cmp.metric)[0]
    out = f"<small class='w'>{esc(word)}</small>"
    if not math.isnan(cmp.ratio):
        ci = (f" <span class='ci'>[{cmp.lo:.3f}–{cmp.hi:.3f}]</span>"    # wraps as one word: a narrow column
              if not (math.isnan(cmp.lo) or math.isnan(cmp.hi)) else "")
        out += f"<small>ratio {cmp.ratio:.3f}{ci}</small>"
    return out


def cmp_title(cmp, desc="", note="", unit="", div=1.0, adjusted=True):
    parts = []
    if desc:
        parts.append(desc)
    if note:
        parts.append(note)
    if cmp is not None:
        if not math.isnan(cmp.ratio):
            parts.append(f"ratio to baseline {cmp.ratio:.3f}"
                         + (f", {cmp.ci_text.replace('..', ' to ')} (95% CI)" if cmp.ci_text != "-" else ""))
            words, pct = speed_words(cmp.ratio, cmp.metric)
            parts.append(f"{words} ({pct}): {cmp.verdict}" + (f", {cmp.not_judged}" if cmp.not_judged_kind else ""))
            if too_wide(cmp) and not cmp.not_judged_kind:
                parts.append(f"the interval's ends are more than {WIDE_CI:g} times apart: too wide to judge the "
                             "change either way (more runs, or fewer disturbances, would narrow it)")
            if cmp.unresolved:
                parts.append("the interval excludes 1 but the change is not significant after adjusting for "
                             "the number of cases: more reps would tell")
            if getattr(cmp, "alone", False):
                parts.append("significant, but the only case of its binary that moved, with one run on a side: "
                             "one run can jump that far, one case at a time; another run of that side would tell")
            if getattr(cmp, "modes", False):
                parts.append("significant at the fast end of the reps, but the median or the fastest rep did not "
                             "follow: the reps fall into a fast and a slow mode and the sides drew a different mix; "
                             "more runs of each side would tell")
        else:
            parts.append(cmp.verdict + (f", {cmp.not_judged}" if cmp.not_judged_kind else ""))
        if not math.isnan(cmp.q):
            fam = f" of its family, {cmp.family}" if getattr(cmp, "family", "") else ""
            parts.append(f"p = {cmp.q:.3g} ({'adjusted for the number of cases' + fam if adjusted else 'not adjusted'})")
        parts.append(f"reps {cmp.base_reps} (baseline) / {cmp.other_reps}; samples {cmp.base_samples} / "
                     f"{cmp.other_samples}")
    return "; ".join(parts)


def _rel(path, out_dir):
    return Path(os.path.relpath(Path(path).resolve(), Path(out_dir).resolve())).as_posix()


def _beside(path, out_dir):
    """The link to path relative to the page, if it sits beside the page
    (in its directory or below: published together, the link resolves),
    else None."""
    rel = _rel(path, out_dir)
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        return None
    return rel


MIME = {"png": "image/png", "svg": "image/svg+xml"}


def _chart_bytes(item):
    """(format, bytes) of a chart: a plot.Chart in memory or a file."""
    if hasattr(item, "data"):
        return item.fmt, item.data
    p = Path(item)
    return p.suffix.lstrip(".").lower(), p.read_bytes()


def _chart_name(item):
    return item.name if hasattr(item, "data") or hasattr(item, "inline") else Path(item).stem


def _data_uri(item):
    fmt, data = _chart_bytes(item)
    return f"data:{MIME.get(fmt, 'application/octet-stream')};base64,{base64.b64encode(data).decode('ascii')}"


def fig_id(item):
    """The anchor of a chart's figure on the page."""
    return "fig-" + re.sub(r"[^A-Za-z0-9_-]+", "-", _chart_name(item)).strip("-")


def _val(v, div):
    return "—" if v is None or math.isnan(v) else fmt_num(v / div)


def _pick(items, prefer):
    """The chart to embed: the first format of prefer found, else the first."""
    for fmt in prefer:
        for it in items:
            if _chart_bytes_fmt(it) == fmt:
                return it
    return items[0]


def _chart_bytes_fmt(item):
    if hasattr(item, "inline"):
        return "inline"
    return item.fmt if hasattr(item, "data") else Path(item).suffix.lstrip(".").lower()


def figures(items_by_name, prefer=("svg", "png")):
    """Each chart embedded in the page (a data: URI), so that the page needs
    no file beside it."""
    out = []
    for name, items in items_by_name.items():
        inline = next((i for i in items if hasattr(i, "inline")), None)
        if inline is not None:  # our own SVG markup (strips.py): no ids inside, safe to inline
            out.append(f"<figure id='{esc(fig_id(inline))}' class='strips'><figcaption>{esc(name)}</figcaption>"
                       f"{inline.inline}</figure>")
            continue
        items = [i for i in items if _chart_bytes_fmt(i) in MIME]
        if not items:
            continue
        it = _pick(items, prefer)
        out.append(f"<figure id='{esc(fig_id(it))}'><img src='{_data_uri(it)}' alt='{esc(name)}' loading='lazy'>"
                   f"<figcaption>{esc(name)}</figcaption></figure>")
    return out


def _by_chart(items):
    """[chart items, one per format, possibly several charts] -> {chart name: [items]}."""
    out = {}
    for it in items:
        out.setdefault(_chart_name(it), []).append(it)
    return out
