#!/usr/bin/python3
"""The run-level model checked on the kept series (data/host-scale): A/A
splits at 1-4 runs a side, one run a side with no history, the kept
slowdowns, and a short run against its copy made 20% slower.

Every comparison is held out: a judged run is never in the history that
judges it, and the built-in drift prior was made from other runs.

The protocol (fixed before any figure was looked at):
- A series: the A/A runs of one prefix in index.txt (its two history runs
  and its A/A runs, in the order they ran).
- Splits at k runs a side: the series' runs paired in order ((1,2), (3,4),
  ...); every choice of k pairs, each pair split either way (the first
  chosen pair's earlier run on the baseline side): every interleaved
  split, ABAB... and ABBA... alike.
- History of a split: the first two runs of the nearest other series of
  the same boot (by start time): a baseline run twice at another moment.
- No history (one run a side): every pair of runs of every series.
- Slowdowns: each kept slowdown at its own runs a side, with its series'
  history pair (the first boot's series and the per-call tax: the first
  series' history pair).

Backends: `model` (this tree's scripts, in process: one estimate per run,
then every comparison) and `cli` (any tree's scripts/compare, one process
a comparison: how the figures of an older model are made again; slow).

  run_level.py [--backend model|cli --tree DIR] [--only aa|k1|slow|short]
               [--json FILE] [--check] [--data DIR]
  run_level.py --blocks | --sessions | --across | --which | --calibration | --bulk | --slopes | --halves
               | --tails | --estimators | --reps | --faults CASE
"""
import argparse
import collections
import gzip
import itertools
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = HERE / "data" / "host-scale"
HEADLINE_SYSCALL = re.compile(r"^lat_syscall (null|read|write|stat|fstat|open)$")
SYSCALL = re.compile(r"^(lat_syscall (null|read|write|stat|fstat|open)|lat_sig install)$")
NULL_CALL = re.compile(r"^lat_syscall null$")
SIGNIFICANT = ("significantly faster", "significantly slower")


# ---- the kept runs and the protocol ---------------------------------------

def read_index(data=DATA):
    """[(role, run id)] in the order index.txt lists them (the order they ran)."""
    out = []
    for line in (data / "index.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            role, name = line.split()
            out.append((role, name))
    return out


def series_of(index):
    """{series: [run ids]}: each prefix's history and A/A runs in order."""
    out = collections.OrderedDict()
    for role, name in index:
        if role == "aa":
            out.setdefault("aa", []).append(name)
        elif role.endswith("-aa") or role.endswith("-history"):
            out.setdefault(role.rsplit("-", 1)[0], []).append(name)
    return out


def splits(runs, k):
    """Every interleaved split of `runs` at k a side: (base, other) lists."""
    pairs = [runs[i:i + 2] for i in range(0, len(runs) - 1, 2)]
    out = []
    for chosen in itertools.combinations(range(len(pairs)), k):
        for flips in itertools.product((0, 1), repeat=k - 1):
            flips = (0,) + flips
            out.append(([pairs[p][f] for p, f in zip(chosen, flips)],
                        [pairs[p][1 - f] for p, f in zip(chosen, flips)]))
    return out


def boot_of(meta):
    return meta.get("boot_id") or meta.get("host", "")


def series_by_boot(series, metas):
    """{boot: [series]}: the series of six runs or more, per boot, in order
    (--sessions, --across: series hours apart on one boot)."""
    out = collections.OrderedDict()
    for s, rs in series.items():
        if len(rs) >= 6:
            out.setdefault(boot_of(metas[rs[0]]), []).append(s)
    return out


def protocol(index, metas, history="near2"):
    """The comparisons: dicts with kind (aa, k1, slow), label, series, k,
    base, other and history (run ids).  history: near2 (the first two runs
    of the nearest other series of the boot) or all (every A/A run of the
    boot's other series: a long history)."""
    series = series_of(index)
    boots = {s: boot_of(metas[rs[0]]) for s, rs in series.items()}
    pos = {name: i for i, (_, name) in enumerate(index)}
    out = []
    for s, rs in series.items():
        others = [t for t in series if t != s and boots[t] == boots[s]]
        near = min(others, key=lambda t: abs(pos[series[t][0]] - pos[rs[0]])) if others else None
        hist = (series[near][:2] if near else []) if history == "near2" else \
            [n for t in others for n in series[t]]
        for k in (1, 2, 3, 4):
            for i, (a, b) in enumerate(splits(rs, k)):
                out.append(dict(kind="aa", label=f"{s} k={k} split {i + 1}", series=s, k=k, base=a, other=b,
                                history=hist))
        for a, b in itertools.combinations(rs, 2):
            out.append(dict(kind="k1", label=f"{s} pair {rs.index(a) + 1}-{rs.index(b) + 1}", series=s, k=1,
                            base=[a], other=[b], history=[]))
    roles = collections.defaultdict(list)
    for role, name in index:
        roles[role].append(name)
    first_hist = series["aa"][:2] if "aa" in series else []
    for role in roles:
        m = re.fullmatch(r"(?:(\w+)-)?(one|tax|cost|small)-base", role)
        if not m:
            continue
        pre = m.group(1) or ""
        hist_series = pre if pre in series and pre not in ("later", "heldout") and \
            any(r == f"{pre}-history" for r, _ in index) else "aa"
        hist = series[hist_series][:2] if hist_series in series else first_hist
        base, taxed = roles[role], roles[role.replace("-base", "-taxed")]
        kind = m.group(2)
        expect = NULL_CALL.pattern if kind in ("one", "small") else SYSCALL.pattern
        n = min(len(base), len(taxed))
        rounds = [(base[i:i + 2], taxed[i:i + 2]) for i in range(0, n - 1, 2)] if kind == "cost" \
            else [(base[:n], taxed[:n])]
        for i, (a, b) in enumerate(rounds):
            out.append(dict(kind="slow", label=f"{role[:-5]}{' round %d' % (i + 1) if len(rounds) > 1 else ''}",
                            series=pre or "aa", k=len(a), base=a, other=b, history=hist, expect=expect,
                            slowdown=kind))
        # and a user's first look: the first run of each, one a side, no history
        out.append(dict(kind="slow", label=f"{role[:-5]} 1v1", series=pre or "aa", k=1, base=base[:1],
                        other=taxed[:1], history=[], expect=expect, slowdown=kind))
    return out


# ---- what a comparison's rows say ------------------------------------------

def summarise(rows, domains, cmp):
    """The figures of one comparison from its rows (dicts with case,
    verdict, p_t, mde_pct, family, change_pct): unchanged cases are every
    case outside `cmp["expect"]` (all of them in an A/A comparison).  Rows
    with `cell_of` (the summary tables' cells that are not one case: a mean
    of cases, a time per event) count in the flags, unchanged unless one of
    their cases is expected to change; the p and mde figures are the
    cases'."""
    expect = re.compile(cmp["expect"]) if cmp.get("expect") else None
    judged = [r for r in rows if not r.get("control") and r["case"] in domains]
    other = [r for r in judged if not (expect and expect.search(r["case"]))]
    ps = [r["p_t"] for r in other if r.get("p_t") is not None and math.isfinite(r["p_t"])]
    cells = [r for r in rows if r.get("cell_of") and not (expect and any(map(expect.search, r["cell_of"])))]
    flagged = [r for r in other + cells if r["verdict"] in SIGNIFICANT]

    def med(rs):
        # (a case not judged has an mde that means nothing: left out)
        v = [r["mde_pct"] for r in rs if r.get("mde_pct") is not None and math.isfinite(r["mde_pct"])
             and not r["verdict"].startswith("not judged")]
        return statistics.median(v) if v else math.nan
    by = {d: [r for r in judged if domains[r["case"]] == d] for d in ("cpu", "memory", "fs")}
    mem_not = [r for r in by["memory"] if r["verdict"].startswith("not judged")]
    out = dict(label=cmp["label"], kind=cmp["kind"], series=cmp["series"], k=cmp["k"],
               cases=len(other), p05=sum(p < 0.05 for p in ps), with_p=len(ps),
               flagged=[(r["case"], r.get("change_pct")) for r in flagged],
               headline_flagged=[r["case"] for r in flagged if (r.get("family") or "").startswith("primary")],
               mde=med(judged), mde_cpu=med(by["cpu"]), mde_memory=med(by["memory"]), mde_fs=med(by["fs"]),
               mde_syscall=med([r for r in judged if HEADLINE_SYSCALL.match(r["case"])]),
               memory_not_judged=len(mem_not), memory_cases=len(by["memory"]))
    if expect:
        want = [r for r in judged if expect.search(r["case"])]
        out["expected"] = len(want)
        out["expected_flagged"] = [(r["case"], r.get("change_pct"), r.get("mde_pct")) for r in want
                                   if r["verdict"] == "significantly slower"]
        out["expected_missed"] = [(r["case"], r.get("change_pct"), r.get("mde_pct")) for r in want
                                  if r["verdict"] != "significantly slower"]
    return out


# ---- backends --------------------------------------------------------------

def unpack(names, dst, data=DATA):
    """The kept runs (gzipped JSON Lines) unpacked under dst: {run id: dir}."""
    out = {}
    for name in names:
        d = dst / name
        if not d.exists():
            d.mkdir(parents=True)
            for f in (data / name).iterdir():
                if f.suffix == ".gz":
                    with gzip.open(f, "rb") as i, open(d / f.stem, "wb") as o:
                        shutil.copyfileobj(i, o)
                else:
                    shutil.copy(f, d / f.name)
        out[name] = d
    return out


class CliBackend:
    """scripts/compare of a tree (this one, or an older checkout), one
    process a comparison, each side a kernel directory of links."""

    def __init__(self, tree, tmp, dirs):
        self.tree, self.tmp, self.dirs = Path(tree), tmp, dirs
        self.n = 0

    def _kernel_dir(self, runs, name):
        self.n += 1
        meta = json.loads((self.dirs[runs[0]] / "meta.json").read_text())
        k = self.tmp / f"{name}{self.n}" / meta.get("host", "host") / meta.get("kernel_release", "kernel")
        k.mkdir(parents=True)
        for r in runs:
            d = k / r
            d.mkdir()
            for f in self.dirs[r].iterdir():
                if f.name == "meta.json":
                    # one kernel to compare: the series' runs carry labels of their roles (history, aa)
                    m = json.loads(f.read_text())
                    m.pop("label", None)
                    (d / f.name).write_text(json.dumps(m))
                else:
                    (d / f.name).symlink_to(f)
        return k

    def compare(self, cmp):
        a, b = self._kernel_dir(cmp["base"], "a"), self._kernel_dir(cmp["other"], "b")
        cmd = [sys.executable, str(self.tree / "scripts" / "compare"), "--no-history"]
        if cmp["history"]:
            cmd += ["--history", str(self._kernel_dir(cmp["history"], "h").parent.parent)]
        out = self.tmp / "c.json"
        p = subprocess.run(cmd + [str(a), str(b), "--json", str(out)], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"run_level.py: compare failed on {cmp['label']}: {p.stderr.strip()[-400:]}")
        got = json.loads(out.read_text())[0]
        shutil.rmtree(a.parent.parent)
        shutil.rmtree(b.parent.parent)
        return got["rows"]


class ModelBackend:
    """This tree's model in process: each run loaded once (its estimates
    are computed once, judge.run_estimates), each comparison as compare
    makes it with --no-history --history H."""

    def __init__(self, dirs, opts=None):
        sys.path.insert(0, str(ROOT / "scripts"))
        from kbench.model import compare, drift, load
        self.cmp, self.load = compare, load
        self.dirs = dirs
        self.runs = {}
        self.opts = opts or compare.Options(prior=drift.load_prior())

    def _runs(self, names):
        for n in names:
            if n not in self.runs:
                self.runs[n] = self.load.load_run(self.dirs[n], self.load.Warnings())
        return [self.runs[n] for n in names]

    def compare(self, cmp):
        c = self.cmp
        a, b = self._runs(cmp["base"]), self._runs(cmp["other"])
        lists = [a, b] + ([self._runs(cmp["history"])] if cmp["history"] else [])
        opts = c.Options(**{**self.opts.__dict__, "run_noise": c.measure_run_noise(lists, self.opts)})
        rep = c.run_compare(c.Side("base", a), c.Side("other", b), opts)
        return [dict(case=r.case, verdict=r.cmp.verdict, p_t=r.cmp.p, mde_pct=r.cmp.mde * 100,
                     family=r.cmp.family, change_pct=r.cmp.change) for r in rep.rows] + \
            [dict(case=key, cell_of=cases, verdict=x.verdict, p_t=x.p, mde_pct=x.mde * 100, family=x.family,
                  change_pct=x.change) for key, (x, _, cases) in rep.cells.items()]


def domains_of(dirs, names):
    """{case: cpu, memory or fs} as the runs' binaries declared them."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import compare, load
    out = {}
    for n in names:
        run = load.load_run(dirs[n], load.Warnings())
        out.update({c: compare.domain_of(case) for c, case in run.cases.items() if not case.control})
    return out


# ---- tables and criteria ---------------------------------------------------

def _median(values):
    """The median of the finite values; nan without one."""
    v = [x for x in values if x is not None and math.isfinite(x)]
    return statistics.median(v) if v else math.nan


def aa_table(results, kind="aa"):
    """{(series, k): figures} over the comparisons of one kind."""
    by = collections.OrderedDict()
    for r in results:
        if r["kind"] == kind:
            by.setdefault((r["series"], r["k"]), []).append(r)
    out = collections.OrderedDict()
    for key, rs in by.items():
        p05 = sum(r["p05"] for r in rs) / max(1, sum(r["with_p"] for r in rs))
        out[key] = dict(n=len(rs), p05=p05, max_flags=max(len(r["flagged"]) for r in rs),
                        headline=sum(len(r["headline_flagged"]) for r in rs),
                        over_one=sum(len(r["flagged"]) > 1 for r in rs),
                        memory_judged=sum(r["memory_not_judged"] == 0 for r in rs) / len(rs),
                        mde=_median(r["mde"] for r in rs), mde_cpu=_median(r["mde_cpu"] for r in rs),
                        mde_memory=_median(r["mde_memory"] for r in rs),
                        mde_syscall=_median(r["mde_syscall"] for r in rs))
    return out


def _pct(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def _mde(x):
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}%"


def report(results, today=None, title=""):
    """The figures as Markdown lines: the A/A tables (series x k), the
    slowdowns, and the issue's criteria, each with today's figure (the
    same protocol judged by an older model: --today) beside."""
    out = []
    tt = {kind: aa_table(today or [], kind) for kind in ("aa", "k1")}
    for kind, head in (("aa", f"A/A splits{title}"), ("k1", "One run a side, no history: every pair of runs")):
        t = aa_table(results, kind)
        if not t:
            continue
        out += ["", f"**{head}.** p<.05: the share of cases with an unadjusted p below .05; flags: cases and "
                    "summary cells called faster or slower (false: every case is unchanged), headline: in a "
                    "summary table; mde: the median over the comparisons of "
                    "each one's median (all cases, CPU-bound, memory-bound, the headline system calls)"
                    + ("; today: the same comparisons by the model this one replaced (its compare judged the "
                       "cases alone)" if today else "") + ".", "",
                "| series | k | n | p<.05 | most flags | >1 flag | headline flags | memory judged | mde all / CPU / "
                "memory / syscall |" + (" today: p<.05, most flags, >1 flag, mde all |" if today else ""),
                "|---|---|---|---|---|---|---|---|---|" + ("---|" if today else "")]
        for (ser, k), v in t.items():
            row = (f"| {ser} | {k} | {v['n']} | {_pct(v['p05'])} | {v['max_flags']} | {v['over_one']} | "
                   f"{v['headline']} | {100 * v['memory_judged']:.0f}% | {_mde(v['mde'])} / {_mde(v['mde_cpu'])} / "
                   f"{_mde(v['mde_memory'])} / {_mde(v['mde_syscall'])} |")
            w = tt[kind].get((ser, k))
            if today:
                row += (f" {_pct(w['p05'])}, {w['max_flags']}, {w['over_one']}, {_mde(w['mde'])} |" if w else " - |")
            out.append(row)
        for k in sorted({k for _, k in t}):
            rs = [r for r in results if r["kind"] == kind and r["k"] == k]
            p = sum(r["p05"] for r in rs) / max(1, sum(r["with_p"] for r in rs))
            row = (f"| all | {k} | {len(rs)} | {_pct(p)} | {max(len(r['flagged']) for r in rs)} | "
                   f"{sum(len(r['flagged']) > 1 for r in rs)} | {sum(len(r['headline_flagged']) for r in rs)} | "
                   f"{100 * sum(r['memory_not_judged'] == 0 for r in rs) / len(rs):.0f}% | "
                   f"{_mde(_median(r['mde'] for r in rs))} |")
            ws = [r for r in today or [] if r["kind"] == kind and r["k"] == k]
            if today:
                row += (f" {_pct(sum(r['p05'] for r in ws) / max(1, sum(r['with_p'] for r in ws)))}, "
                        f"{max(len(r['flagged']) for r in ws)}, {sum(len(r['flagged']) > 1 for r in ws)}, "
                        f"{_mde(_median(r['mde'] for r in ws))} |" if ws else " - |")
            out.append(row)
    slow = [r for r in results if r["kind"] == "slow"]
    if slow:
        old = {r["label"]: r for r in today or [] if r["kind"] == "slow"}
        out += ["", "**Slowdowns**, each at its own runs a side with its series' history pair: the expected "
                    "cases flagged slower (of 1 for getppid alone, of 7 for a tax on every call), the others "
                    "flagged" + (", and today's" if today else "") + ".", "",
                "| slowdown | k | flagged | missed (change, mde) | others flagged |" + (" today |" if today else ""),
                "|---|---|---|---|---|" + ("---|" if today else "")]
        for r in slow:
            miss = ", ".join(f"{c.split(' ', 1)[1]} ({ch:+.1f}%, {m:.1f}%)" for c, ch, m in r["expected_missed"]
                             if ch is not None and m is not None)
            row = (f"| {r['label']} | {r['k']} | {len(r['expected_flagged'])} of {r['expected']} | {miss or '-'} | "
                   f"{', '.join(c for c, _ in r['flagged']) or '-'} |")
            o = old.get(r["label"])
            if today:
                row += (f" {len(o['expected_flagged'])} of {o['expected']}, {len(o['flagged'])} others |"
                        if o else " - |")
            out.append(row)
    return out


AMD = ("aa", "later", "heldout", "fresh", "check", "hold", "late", "plan", "again")


def criteria(results, today=None):
    """The issue's criteria: (what, figure, met) per line."""
    out = []
    aa = [r for r in results if r["kind"] == "aa"]
    if aa:
        bad = [r for r in aa if len(r["flagged"]) > 1 or r["headline_flagged"]]
        out.append(("A/A: comparisons with more than one false flag or a headline one",
                    f"{len(bad)} of {len(aa)}", not bad))
        for k in sorted({r["k"] for r in aa}):
            rs = [r for r in aa if r["k"] == k]
            p = sum(r["p05"] for r in rs) / max(1, sum(r["with_p"] for r in rs))
            out.append((f"A/A k={k}: share of unchanged cases at p < .05 (3-8%)", _pct(p), 0.03 <= p <= 0.08))
        mem = sum(r["memory_not_judged"] == 0 for r in aa) / len(aa)
        out.append(("A/A: comparisons with every memory-bound case judged (>= 80%)", f"{100 * mem:.0f}%", mem >= 0.8))
    if today:
        t_aa, n_aa = aa_table(today, "aa"), aa_table(results, "aa")
        for k, limit in ((2, 1.0), (3, 1.25)):
            worse = [f"{s} {n_aa[(s, k)]['mde']:.1f} vs {t_aa[(s, k)]['mde']:.1f}" for s in AMD + ("intel",)
                     if (s, k) in n_aa and (s, k) in t_aa and n_aa[(s, k)]["mde"] > limit * t_aa[(s, k)]["mde"]]
            out.append((f"power: median mde at k={k} within {limit:g}x today's, every series",
                        "; ".join(worse) or "all", not worse))
    sys3 = {s: v["mde_syscall"] for (s, k), v in aa_table(results, "aa").items() if k == 3 and s in AMD}
    if sys3:
        over = [f"{s} {m:.1f}%" for s, m in sys3.items() if m > 3.0]
        out.append(("AMD series: headline system calls' mde <= 3% at k=3", "; ".join(over) or "all",
                    not over))
    slow = [r for r in results if r["kind"] == "slow"]
    if slow and today:
        old = {r["label"]: len(r["expected_flagged"]) for r in today if r["kind"] == "slow"}
        fewer = [f"{r['label']} {len(r['expected_flagged'])} vs {old[r['label']]}" for r in slow
                 if r["label"] in old and len(r["expected_flagged"]) < old[r["label"]]]
        out.append(("slowdowns: expected cases flagged, as today or more", "; ".join(fewer) or "all", not fewer))
    k1 = [r for r in results if r["kind"] == "k1"]
    if k1:
        bad = [r for r in k1 if len(r["flagged"]) > 1 or r["headline_flagged"]]
        out.append(("one run a side, no history: pairs with more than one false flag or a headline one",
                    f"{len(bad)} of {len(k1)}", not bad))
        t = aa_table(results, "k1")
        over = [f"{s} {v['mde']:.1f}%" for (s, _), v in t.items() if v["mde"] > 12.0]
        out.append(("one run a side, no history: median mde <= 12% on every series", "; ".join(over) or "all",
                    not over))
    return out


def _runs_and_estimates(dirs, names):
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import compare, judge, load
    opts = compare.Options()
    runs = {n: load.load_run(dirs[n], load.Warnings()) for n in names}
    est = {n: judge.run_estimates(r, opts) for n, r in runs.items()}
    return runs, est


def blocks(dirs, index):
    """Is a run's block drift a fair predictor of the drift to the next
    run?  Per consecutive pair of A/A runs: the scale a of the pair's own
    differences (as the model fits one run a side: runmodel.fit_t, the
    CPU-bound cases, relative to the CPU speed) against the mean of the
    two runs' block scales (each case's reps in two halves by time, the
    halves' mean log times apart, fitted the same way with the halves'
    own noise).  Printed: per domain, the correlation of their logs and the
    sd of the log ratio, beside the sd of the pair scales themselves."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import compare, drift, judge, runmodel, stats
    prior = drift.load_prior()
    series = series_of(index)
    names = [n for rs in series.values() for n in rs]
    runs, est = _runs_and_estimates(dirs, names)

    def speed(n):
        cpu, _ = judge.control_names([runs[n]])
        return judge.covariates(est[n], cpu, [])[0]

    def half_scale(n, dom):
        d2, w, t2 = [], [], []
        for name, c in runs[n].cases.items():
            if c.control or compare.domain_of(c) != dom:
                continue
            keys = sorted(c.rep_keys(), key=lambda k: c.rep_start.get(k, 0))
            y = stats.Series.single([np.asarray(c.reps[k], dtype=float) for k in keys], c.metric).log_times()
            y = y[np.isfinite(y)]
            if len(y) < 4:
                continue
            a, b = y[: len(y) // 2], y[len(y) // 2:]
            d2.append((a.mean() - b.mean()) ** 2)
            w.append(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
            t2.append(prior.get(name)[0])
        got = runmodel.fit_t(np.array(d2), np.array(w), np.array(t2))
        return got[0] if got else math.nan

    out = {}
    for dom in ("cpu", "memory"):
        pts = []
        for rs in series.values():
            for x, y in zip(rs, rs[1:]):
                keys = [k for k in est[x] if k in est[y] and not k.startswith("cell:") and k in runs[x].cases
                        and not runs[x].cases[k].control and compare.domain_of(runs[x].cases[k]) == dom]
                dd = np.array([est[y][k][0] - est[x][k][0] - (speed(y) - speed(x)) for k in keys])
                w = np.array([(est[x][k][1] ** 2 + est[y][k][1] ** 2) / 2 for k in keys])
                t2 = np.array([prior.get(k)[0] for k in keys])
                got = runmodel.fit_t(dd * dd / 2, w, t2)
                hb = (half_scale(x, dom) + half_scale(y, dom)) / 2
                if got and got[0] > 0 and hb > 0:
                    pts.append((math.log(got[0]), math.log(hb)))
        a, b = np.array([p[0] for p in pts]), np.array([p[1] for p in pts])
        out[dom] = (len(pts), float(np.corrcoef(a, b)[0, 1]), float(np.std(a - b, ddof=1)), float(np.std(a, ddof=1)))
    for dom, (n, r, sd_ratio, sd_pair) in out.items():
        print(f"{dom}: {n} pairs of runs; correlation of log(pair scale) and log(block scale) {r:.2f}; sd of "
              f"their log ratio {sd_ratio:.2f}, of the pair scale itself {sd_pair:.2f}")
    return 0


def which(dirs, index):
    """Which cases drift between runs: per series of six runs or more, each
    case's variance of its runs' estimates (log time) against the median
    over the runs of its own reps' noise w (the estimate's squared
    bootstrap error), of its reps' own variance (log time, not divided by
    their number: drift between runs does not shrink with more reps) and
    against the built-in drift prior's tau^2.  Printed: the correlation
    of the logs, the median ratio and the sd of the log ratio, over every
    series and per series."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import drift, stats
    prior = drift.load_prior()
    series = {s: rs for s, rs in series_of(index).items() if len(rs) >= 6}
    runs, est = _runs_and_estimates(dirs, [n for rs in series.values() for n in rs])
    rows = []
    for name, rs in series.items():
        keys = set.intersection(*[set(est[n]) for n in rs])
        for k in sorted(keys):
            if k.startswith(("ctl_", "cell:")):
                continue
            theta = np.array([est[n][k][0] for n in rs])
            w = np.array([est[n][k][1] ** 2 for n in rs])
            s2 = []
            for n in rs:
                c = runs[n].cases.get(k)
                y = stats.Series.single([np.asarray(c.reps[r], dtype=float) for r in c.rep_keys()],
                                        c.metric).log_times() if c is not None else np.array([])
                y = y[np.isfinite(y)]
                s2.append(float(np.var(y, ddof=1)) if len(y) > 1 else math.nan)
            if np.all(np.isfinite(theta)) and np.all(w > 0) and np.nanmedian(s2) > 0:
                rows.append((name, float(np.var(theta, ddof=1)), float(np.median(w)), prior.get(k)[0],
                             float(np.nanmedian(s2))))
    print("| series | cases | corr: w / reps' variance / prior | median ratio: to w / to prior | "
          "log-sd of the ratio: w / reps' variance / prior |")
    print("|---|---|---|---|---|")
    for label in ["all"] + list(series):
        sel = [r for r in rows if label in ("all", r[0])]
        v, w, t, s2 = (np.array([r[i] for r in sel]) for i in (1, 2, 3, 4))
        lv, lw, lt, ls = np.log(np.maximum(v, 1e-12)), np.log(w), np.log(t), np.log(s2)
        print(f"| {label} | {len(sel)} | {np.corrcoef(lv, lw)[0, 1]:.2f} / {np.corrcoef(lv, ls)[0, 1]:.2f} / "
              f"{np.corrcoef(lv, lt)[0, 1]:.2f} | {np.median(v / w):.2f} / {np.median(v / t):.2f} | "
              f"{np.std(lv - lw):.2f} / {np.std(lv - ls):.2f} / {np.std(lv - lt):.2f} |")
    return 0


def sessions(dirs, index, metas):
    """What the runs of one session share: per boot, each case's variance
    of its series' means (A/A series hours apart) beyond what its runs'
    own variance explains, over that variance (the model's SESSION_SHARE),
    the median over the cases of each domain (CPU-bound relative to the
    CPU speed), the memory manager's cases ("state": compare.scale_group)
    apart from the other CPU-bound ones.  Then the same in the model's own
    terms: the series' means weighed as a comparison weighs its sides'
    runs, the cases relative to every control by their fitted slopes, and
    one run's variance as the model takes it (runmodel.variances, each
    series a group of its own)."""
    import statistics as st
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import compare, judge
    series = series_of(index)
    names = [n for rs in series.values() for n in rs]
    runs, est = _runs_and_estimates(dirs, names)
    for boot, group in ((b, [series[s] for s in ss]) for b, ss in series_by_boot(series, metas).items()):
        if len(group) < 2:
            continue
        cpu, _ = judge.control_names([runs[n] for rs in group for n in rs])
        spd = {n: judge.covariates(est[n], cpu, [])[0] for rs in group for n in rs}
        cases = [k for k, c in runs[group[0][0]].cases.items() if not c.control]
        by = collections.defaultdict(list)
        for k in cases:
            case = runs[group[0][0]].cases[k]
            dom = "state" if compare.scale_group(case) == "state" else compare.domain_of(case)
            ms, vs, ns = [], [], []
            for rs in group:
                y = [est[n][k][0] - (spd[n] if dom != "fs" else 0.0) for n in rs if k in est[n]]
                if len(y) < 3:
                    break
                ms.append(st.mean(y))
                vs.append(st.variance(y))
                ns.append(len(y))
            else:
                v = st.mean(vs)
                if v > 0:
                    by[dom].append((st.variance(ms) - st.mean(x / m for x, m in zip(vs, ns))) / v)
        own = _model_shares([runs[n] for rs in group for n in rs], [est[n] for rs in group for n in rs],
                            [len(rs) for rs in group])
        print(f"boot {boot[:8]} ({len(group)} series): " + ", ".join(
            f"{d} {st.median(r):.2f} over {len(r)} cases" for d, r in sorted(by.items()))
            + "; in the model's own terms: " + ", ".join(f"{d} {v:.2f}" for d, v in sorted(own.items())))
    return 0


def _model_shares(rws, ests, sizes):
    """{domain: the median session share} of runs in consecutive series of
    these sizes, in the model's own terms (sessions())."""
    import numpy as np
    from kbench.model import compare, drift, judge, runmodel
    opts = compare.Options(prior=drift.load_prior())
    cpu, mem = judge.control_names(rws)
    keys = [k for k, c in rws[0].cases.items() if not c.control]
    groups = [[] for _ in sizes]
    for i in range(sum(sizes)):
        groups[next(g for g in range(len(sizes)) if i < sum(sizes[:g + 1]))].append(i)
    domains = [compare.scale_group(rws[0].cases[k]) for k in keys]
    d, tau2, x_tau2 = judge.model_inputs(rws, ests, cpu, mem, keys, 0, None, opts)
    rows = list(range(len(rws)))
    sig2 = runmodel.variances(d, rows, groups, domains, tau2, True, x_tau2)[0]
    u = runmodel.weights(d.w, sig2, runmodel._nanmedian(d.w[rows]))
    m0, v0 = runmodel.beta_prior([runmodel.SCALE_AS.get(g, g) for g in domains], d.x.shape[1], True, tau2, x_tau2)
    xtx, xty, _, _ = runmodel._moments(d, groups, u)
    beta = runmodel._posterior(xtx, xty, m0, v0, sig2)[0]
    adj = d.y - d.x @ beta.T if d.x.shape[1] else d.y
    by = collections.defaultdict(list)
    for j, k in enumerate(keys):
        dom = "state" if domains[j] == "state" else compare.domain_of(rws[0].cases[k])
        ms = [np.sum(u[g, j] * adj[g, j]) / np.sum(u[g, j]) for g in groups]
        if all(np.isfinite(ms)) and np.isfinite(sig2[j]) and sig2[j] > 0:
            within = np.mean([sig2[j] / np.sum(u[g, j]) for g in groups])
            by[dom].append((np.var(ms, ddof=1) - within) / sig2[j])
    return {dom: float(np.median(v)) for dom, v in by.items()}


def across(dirs, index, metas, jobs):
    """A/A across sessions: the sides from two series of one boot (hours
    apart, so each side a session of its own, as two kernels measured on
    two occasions are), with every run of the boot's other series as the
    history.  Per boot with two series of six runs or more, each pair of
    series (the earlier one the baseline) at k = 1, 2, 3 runs a side, in
    two windows: the earlier series' last k against the later one's first
    k, and its first k against the later one's last k; at one run a side
    also with no history (a first look at two kernels, one run each)."""
    series = series_of(index)
    cmps = []
    for ss in series_by_boot(series, metas).values():
        for si, sj in itertools.combinations(ss, 2):
            hist = [n for t in ss if t not in (si, sj) for n in series[t]]
            for k in (1, 2, 3):
                for w, (a, b) in enumerate(((series[si][-k:], series[sj][:k]), (series[si][:k], series[sj][-k:]))):
                    for h in ([hist, []] if k == 1 else [hist]):
                        cmps.append(dict(kind="aa", label=f"{si}/{sj} k={k} {('last/first', 'first/last')[w]}"
                                         + ("" if h else " no history"), series=f"{si}/{sj}", k=k, base=a, other=b,
                                         history=h, row=f"{k}" if h else f"{k}, no history"))
    names = [n for _, n in index]
    results = run_all(cmps, dirs, domains_of(dirs, names[:1]), jobs)
    print("| k | comparisons | unchanged cases at p < .05 | with a flag | more than one | a headline flag | "
          "median mde | headline system calls |")
    print("|---|---|---|---|---|---|---|---|")
    for row in ("1, no history", "1", "2", "3"):
        rs = [r for r, c in zip(results, cmps) if c["row"] == row]
        print(f"| {row} | {len(rs)} | {_pct(sum(r['p05'] for r in rs) / max(1, sum(r['with_p'] for r in rs)))} | "
              f"{sum(bool(r['flagged']) for r in rs)} | {sum(len(r['flagged']) > 1 for r in rs)} | "
              f"{sum(bool(r['headline_flagged']) for r in rs)} | {_mde(_median(r['mde'] for r in rs))} | "
              f"{_mde(_median(r['mde_syscall'] for r in rs))} |")
    print()
    for r in results:
        if r["flagged"]:
            print(f"- {r['label']}: " + ", ".join(f"`{c}` {abs(v):.0f}% {'faster' if v > 0 else 'slower'}"
                                                  for c, v in r["flagged"]))
    return 0


MARK_BEGIN = "<!-- run_level.py: begin -->"
MARK_END = "<!-- run_level.py: end -->"
README = HERE / "README.md"
REPLACED = HERE / "data" / "run-level" / "replaced-model.json"


def _aa_fits(dirs, index, metas, ks=None, kinds=("aa",)):
    """[(comparison, [(runmodel.Fit, domains, Design, the sides' rows)])]:
    every A/A split (at ks runs a side, default all; kinds: also "k1", the
    pairs with no history) judged once, with every fit the model made for
    it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import runmodel
    rec = []
    orig = runmodel.fit

    def fit(d, base_rows, other_rows, groups, domains, tau2, **kw):
        f = orig(d, base_rows, other_rows, groups, domains, tau2, **kw)
        rec.append((f, list(domains), d, list(base_rows) + list(other_rows)))
        return f
    runmodel.fit = fit
    out = []
    try:
        backend = ModelBackend(dirs)
        for c in protocol(index, metas):
            if c["kind"] in kinds and (not ks or c["k"] in ks):
                n = len(rec)
                backend.compare(c)
                out.append((c, rec[n:]))
    finally:
        runmodel.fit = orig
    return out


def calibration(dirs, index, metas, ks=None):
    """Where the A/A splits' intervals stand against their own
    differences: per k and domain, the median of t^2 (the difference over
    its standard error, squared) over the median the model's t
    distribution gives it (1: as wide as the differences; 2: twice the
    variance they show), the share of the variance beyond one run's total
    variance over the runs a side (the covariates' uncertainty and the
    runs' weights), and the median scale (a, b) of s0 = a tau^2 + b w."""
    import numpy as np
    by_k = collections.defaultdict(list)
    for c, fits in _aa_fits(dirs, index, metas, ks):
        by_k[c["k"]] += [(f, doms) for f, doms, _, _ in fits]
    from kbench.model import runmodel, stats      # (on the path _aa_fits set)
    print("| k | domain | cases | median t^2 / the model's | variance beyond the runs' part | scale a / b |")
    print("|---|---|---|---|---|---|")
    for k in sorted(by_k):
        for dom in ("cpu", "cross", "same", "memory", "fs"):
            t2, expect, rest, a, b = [], [], [], [], []
            for f, doms in by_k[k]:
                m = np.array([x == dom for x in doms], dtype=bool).reshape(-1) & np.isfinite(f.delta) \
                    & np.isfinite(f.var) & (f.var > 0)
                if not np.any(m):
                    continue
                t2 += list(f.delta[m] ** 2 / f.var[m])
                expect += [stats.t_quantile(0.5, v) ** 2 for v in f.df[m]]
                # var is the scale of the t the difference is tested with (runmodel.tailed): the same
                # factor on one run's part
                kk = 1.0 / f.k[0] + 1.0 / f.k[1]
                total = f.sig2[m] * kk + f.vbeta[m] + f.vsess[m]
                known = runmodel.known_to(f.rdf[m] * (f.k[0] + f.k[1]), f.mom[m]) + f.dof[m]
                rest += list(1.0 - f.sig2[m] * kk * runmodel.tailed(total, known)[0] / total / f.var[m])
                if dom in f.scale:
                    a.append(f.scale[dom][0])
                    b.append(f.scale[dom][1])
            if t2:
                print(f"| {k} | {dom} | {len(t2)} | {np.median(t2) / np.median(expect):.2f} | "
                      f"{100 * np.median(rest):.0f}% | {np.median(a):.3g} / {np.median(b):.3g} |")
    return 0


# The classes of --tails, by what moves a case from run to run besides the
# machine's speed: the two-party and memory-bound groups as the model scales
# them; cases that carry state from run to run (the file system, the page
# cache, a process's memory, sockets in TIME_WAIT, and lat_ctx's work and
# overhead cases, whose working sets are placed once a run); the rest, system
# calls and signals, none.
STATE_BENCHES = ("lat_proc", "lat_pagefault", "lat_mmap", "lat_fs", "lat_connect", "lat_ctx")
TAIL_CLASSES = ("stateless", "state", "two-party", "memory")


def tail_class(key, domain):
    """A key's class for --tails: its model domain, its bench, or for a
    summary cell (cell:CATEGORY:LABEL) its table."""
    if domain in ("cross", "same"):
        return "two-party"
    if domain in ("memory", "dram"):
        return "memory"
    if key.startswith("cell:"):
        table = key.split(":")[1]
        return "two-party" if table.startswith("Context") else "state" if table.startswith("File") else "stateless"
    return "state" if domain == "fs" or key.split()[0] in STATE_BENCHES else "stateless"


def tails(dirs, index, metas):
    """Where the unchanged cases' tails are: over the A/A splits and the
    pairs with no history, per class (tail_class) and runs a side, the
    share of cases at p below .05 / .01 / .001 / .0001 as a multiple of
    it, with each difference tested against t with 4 (the model's), 8 and
    infinitely many degrees of freedom, each scaled to the model's
    variance (the cases whose t has fewer than D0 degrees of freedom, few
    reps, are left out: their test is t of the variance itself)."""
    fits = _aa_fits(dirs, index, metas, kinds=("aa", "k1"))
    from kbench.model import pvalues        # (on the path _aa_fits set)
    from kbench.model.tails import D0
    alphas, nus = (0.05, 0.01, 0.001, 0.0001), (4.0, 8.0, math.inf)
    count = collections.defaultdict(lambda: [0] * (len(nus) * len(alphas)))
    n = collections.Counter()
    for c, got in fits:
        when = "one a side" if c["k"] == 1 else "two to four a side"
        for f, doms, _, _ in got:
            for j, key in enumerate(f.keys):
                d, var, df = f.delta[j], f.var[j], f.df[j]
                if doms[j] == "control" or not (math.isfinite(d) and math.isfinite(var) and var > 0) or df < D0:
                    continue
                cls = (when, tail_class(str(key), doms[j]))
                n[cls] += 1
                total = var * D0 / (D0 - 2.0)       # the variance the model's t(D0) was scaled to
                for i, nu in enumerate(nus):
                    if math.isinf(nu):
                        p = math.erfc(abs(d) / math.sqrt(2.0 * total))
                    else:
                        p = pvalues.t_two_sided_p(abs(d) / math.sqrt(total * (nu - 2.0) / nu), nu)
                    for a, alpha in enumerate(alphas):
                        count[cls][i * len(alphas) + a] += p < alpha
    print("| runs a side | class | cases | t(4): .05 / .01 / .001 / .0001 | t(8) | normal |")
    print("|---|---|---|---|---|---|")
    for when in ("one a side", "two to four a side"):
        for cls in TAIL_CLASSES:
            m = n[(when, cls)]
            if not m:
                continue
            cells = [" / ".join(f"{count[(when, cls)][i * len(alphas) + a] / m / alpha:.2f}"
                                for a, alpha in enumerate(alphas)) for i in range(len(nus))]
            print(f"| {when} | {cls} | {m} | " + " | ".join(cells) + " |")
    return 0


def bulk(dirs, index, metas):
    """The groups' shared factors: per A/A series, the spread over its runs
    of each group's median case (each case against its mean over the runs)
    beside the CPU speed's; and per k the A/A splits' lambda per group (the
    median t^2 over the median the model's t gives it, before any
    widening: runmodel.bulk_widen) and how often a group was widened."""
    import numpy as np
    doms = ("cpu", "cross", "same", "memory", "fs")
    # each comparison's fit of its cases (the one with the most keys: not the controls', nor a scaling point's)
    judged = [(c, max(fits, key=lambda r: len(r[0].keys))) for c, fits in _aa_fits(dirs, index, metas)]
    from kbench.model import runmodel   # (on the path _aa_fits set)
    print("| series | runs | CPU speed sd | the median case's sd over the runs: " + " / ".join(doms) + " |")
    print("|---|---|---|---|")
    for s in dict.fromkeys(c["series"] for c, _ in judged):
        # the series' split with the most runs a side: all its runs
        _, (f, dm, d, rows) = max(((c, r) for c, r in judged if c["series"] == s), key=lambda cr: cr[0]["k"])
        dm = np.array(dm)
        sds = []
        for g in doms:
            y = d.y[np.ix_(rows, np.where(dm == g)[0])]
            sds.append(float(np.std(np.nanmedian(y - np.nanmean(y, axis=0), axis=1), ddof=1)))
        print(f"| {s} | {len(rows)} | {100 * float(np.std(d.x[rows, 0], ddof=1)):.1f}% | "
              + " / ".join(f"{100 * v:.1f}%" for v in sds) + " |")
    by_k = collections.defaultdict(list)
    for c, (f, dm, _, _) in judged:
        by_k[c["k"]].append((f, dm))
    print()
    print("| k | group | splits | lambda: median / 90th percentile / largest | widened |")
    print("|---|---|---|---|---|")
    for k in sorted(by_k):
        for g in doms:
            lams = []
            for f, dm in by_k[k]:
                ix = np.array([x == g for x in dm], dtype=bool)
                if g in f.bulk:
                    lams.append(f.bulk[g])
                elif np.sum(ix) >= runmodel.MIN_FIT:
                    lams.append(runmodel.bulk_widen(f.delta[ix], f.var[ix], f.df[ix], f.var[ix])[1])
            lams = np.array([v for v in lams if math.isfinite(v)])
            if len(lams):
                print(f"| {k} | {g} | {len(lams)} | {np.median(lams):.2f} / {np.percentile(lams, 90):.2f} / "
                      f"{lams.max():.2f} | {sum(g in f.bulk for f, _ in by_k[k])} |")
    return 0


def slopes(dirs, index, metas):
    """How CPU-bound cases follow the CPU speed: per A/A series (the runs of
    its largest split), each case's least-squares slope on the run's CPU
    speed, and over the cases: the median, the
    interquartile range, the sd, the median standard error of a slope and
    the sd beyond it (what the cases' slopes differ by, their estimates'
    noise taken out)."""
    import numpy as np
    judged = [(c, max(fits, key=lambda r: len(r[0].keys))) for c, fits in _aa_fits(dirs, index, metas, (3, 4))]
    print("| series | runs | CPU speed sd | slope: median / IQR / sd | median se | sd beyond the se |")
    print("|---|---|---|---|---|---|")
    for s in dict.fromkeys(c["series"] for c, _ in judged):
        _, (_, dm, d, rows) = max(((c, r) for c, r in judged if c["series"] == s), key=lambda cr: cr[0]["k"])
        x = d.x[rows, 0] - d.x[rows, 0].mean()
        if len(rows) < 3 or not np.sum(x * x) > 0:
            continue
        sl, se2 = [], []          # the slopes and their squared standard errors
        for j in (j for j, g in enumerate(dm) if g == "cpu"):
            y = d.y[rows, j]
            if np.all(np.isfinite(y)):
                b = float(np.sum(x * (y - y.mean())) / np.sum(x * x))
                r = y - y.mean() - b * x
                sl.append(b)
                se2.append(float(np.sum(r * r) / (len(y) - 2) / np.sum(x * x)))
        sl = np.array(sl)
        q = np.percentile(sl, [25, 50, 75])
        beyond = math.sqrt(max(float(np.var(sl)) - float(np.mean(se2)), 0.0))
        print(f"| {s} | {len(rows)} | {100 * float(np.std(d.x[rows, 0])):.1f}% | {q[1]:.2f} / {q[0]:.2f}-{q[2]:.2f} / "
              f"{float(np.std(sl)):.2f} | {math.sqrt(float(np.median(se2))):.2f} | {beyond:.2f} |")
    return 0


def faults(index, case):
    """A case's runs against the page faults of its samples: per A/A series,
    in the order the runs ran, each run's 20th percentile of ns per op and
    its median ops per minor fault (for lat_pagefault file: the pages one
    fault maps, which the page cache's folios set), and their correlation
    over the series' runs."""
    import numpy as np
    lines = []
    for s, runs in series_of(index).items():
        pts = []
        for r in runs:
            with gzip.open(DATA / r / "samples.jsonl.gz", "rt") as f:
                xs = [json.loads(line) for line in f if case in line]      # the text first: most lines are not
            xs = [x for x in xs if x.get("case") == case and x.get("minflt")]
            if xs:
                pts.append((sorted(x["ns_per_op"] for x in xs)[len(xs) // 5],
                            statistics.median(x["iters"] / x["minflt"] for x in xs)))
        if len(pts) >= 3:
            r = float(np.corrcoef([p[0] for p in pts], [p[1] for p in pts])[0, 1])
            lines.append(f"| {s} | " + " ".join(f"{a:.0f}/{b:.0f}" for a, b in pts) + f" | {r:.2f} |")
    if not lines:
        print(f"run_level.py: --faults: no kept run has samples of {case!r} with page faults", file=sys.stderr)
        return 1
    print("\n".join([f"| series | {case}: each run's ns/op (20th percentile) / ops per fault | correlation |",
                     "|---|---|---|"] + lines))
    return 0


def halves(dirs, index):
    """The reps' part of a run's variance, within one run: each case's
    estimate on its odd and on its even reps (in the order they ran), and
    their difference against the bootstrap's standard errors of the two
    (the w the model adds per run), per domain over every kept run: the
    median of d^2 / (w_odd + w_even) and the share at p < .05 under t of
    the errors' degrees of freedom (as a comparison widens for them) and
    under normal tails.  No drift between runs enters: a reps' part that
    held as the model takes it would give 5%.  Then the same differences
    under the model's own test (runmodel.tailed: t(D0) of the variance,
    widened for the errors' degrees of freedom), those degrees of freedom
    as they are and times 2, 3 and without end: the shares at p < .05,
    .01 and .001."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import compare, judge, load, runmodel, stats
    from kbench.model.pvalues import t_two_sided_p
    opts = compare.Options()
    by = {}
    for _, n in index:
        run = load.load_run(dirs[n], load.Warnings())
        for name, c in run.cases.items():
            keys = sorted(c.reps, key=lambda k: (c.rep_start.get(k, 0), k[1]))
            if c.control or len(keys) < 8:
                continue
            est = [judge.side_estimate(stats.Series.single([np.asarray(c.reps[k], dtype=float) for k in half],
                                                           c.metric, name, units=[k[0] for k in half],
                                                           estimator=opts.estimator),
                                       opts.n_boot, stats.seeded_rng(opts.seed, n, f"{name} {i}"), opts.estimator)
                   for i, half in enumerate((keys[0::2], keys[1::2]))]
            if any(math.isnan(e.theta) or not e.se > 0 for e in est):
                continue
            t = abs(est[0].theta - est[1].theta) / math.hypot(est[0].se, est[1].se)
            df = (est[0].se ** 2 + est[1].se ** 2) ** 2 / sum(e.se ** 4 / e.df for e in est)   # Satterthwaite
            for g in (compare.domain_of(c), "all"):
                by.setdefault(g, []).append((t * t, t_two_sided_p(t, df), math.erfc(t / math.sqrt(2)), df,
                                             len(keys)))
    lines = ["| domain | cases x runs | reps a run | median d^2 / w (normal: 0.45) | p < .05 under t(df) / normal "
             "| median df |", "|---|---|---|---|---|---|"]
    for g in ("cpu", "memory", "fs", "all"):
        xs = np.array(by.get(g, []))
        if len(xs):
            lines.append(f"| {g} | {len(xs)} | {np.median(xs[:, 4]):.0f} | {np.median(xs[:, 0]):.2f} | "
                         f"{100 * np.mean(xs[:, 1] < 0.05):.1f}% / {100 * np.mean(xs[:, 2] < 0.05):.1f}% | "
                         f"{np.median(xs[:, 3]):.1f} |")
    xs = np.array(by.get("all", []))
    if len(xs):
        lines += ["", "| the model's test, the errors' degrees of freedom times | p < .05 | p < .01 | p < .001 |",
                  "|---|---|---|---|"]
        for m in (1.0, 2.0, 3.0, math.inf):
            scale2, df = runmodel.tailed(np.ones(len(xs)), xs[:, 3] * m)
            p = np.array([t_two_sided_p(t, v) for t, v in zip(np.sqrt(xs[:, 0] / scale2), df)])
            lines.append(f"| {m:g} | " + " | ".join(f"{100 * np.mean(p < a):.2f}%" for a in (0.05, 0.01, 0.001))
                         + " |")
    print("\n".join(lines))
    return 0


def estimators(dirs, index):
    """How far each estimator of a case strays between the runs of one
    series: per series and case (three runs or more), the sd of each run's
    estimate over its reps' log times (as the model takes them); the
    median over every series-case pair and the headline system calls', then
    per series.  The Harrell-Davis quantiles at 5-50% (the model's `low` is
    LOW_Q), the mean and the 25% trimmed mean of the reps' medians (a rep's
    value as the model takes it), and two quantiles of each rep's fastest
    sample instead, and the model's on the first half of the reps."""
    import numpy as np
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import bootstrap, load, stats
    from kbench.model.defaults import LOW_Q

    def hd(q):
        return lambda y: float(np.sort(y) @ bootstrap.hd_weights(len(y), q))

    def trimmed(y):
        y = np.sort(y)
        cut = len(y) // 4
        return float(y[cut:len(y) - cut].mean())
    ests = {f"{q:.0%} quantile": (0, hd(q)) for q in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5)}
    ests.update({"mean": (0, lambda y: float(np.mean(y))), "25% trimmed mean": (0, trimmed)})
    ests.update({f"{q:.0%} quantile of the fastest samples": (1, hd(q)) for q in (0.1, 0.2)})
    # what half the reps give (the first half, in the order they ran): how far more reps narrow it
    ests[f"{LOW_Q:.0%} quantile of the first half of the reps"] = (2, hd(LOW_Q))
    sds = collections.defaultdict(list)       # (estimator, series or "all") -> [(sd, headline)]
    for s, runs in series_of(index).items():
        per = collections.defaultdict(list)
        for n in runs:
            run = load.load_run(dirs[n], load.Warnings())
            for name, c in run.cases.items():
                y = stats.Series.single(c.rep_arrays(), c.metric, name).log_times()
                y = y[np.isfinite(y)]
                if not c.control and len(y) >= 3:
                    reps = [stats.to_log_time(a, c.metric) for a in c.rep_arrays()]
                    fast = np.array([np.nanmin(t) for t in reps if np.any(np.isfinite(t))])
                    per[name].append((y, fast, y[:len(y) // 2] if len(y) >= 6 else None))
        for name, ys in per.items():
            if len(ys) >= 3:
                for e, (which, f) in ests.items():
                    got = [f(y[which]) for y in ys if y[which] is not None]
                    if len(got) < 3:
                        continue
                    sd = float(np.std(got, ddof=1))
                    for key in (s, "all"):
                        sds[(e, key)].append((sd, bool(HEADLINE_SYSCALL.match(name))))
    names = list(series_of(index)) + ["all"]
    lines = ["| estimator | " + " | ".join(names) + " | headline system calls (all) |",
             "|---|" + "---|" * (len(names) + 1)]
    for e in ests:
        row = [100 * statistics.median(sd for sd, _ in sds[(e, key)]) for key in names]
        head = [sd for sd, h in sds[(e, "all")] if h]
        lines.append(f"| {e} | " + " | ".join(f"{v:.2f}%" for v in row) +
                     f" | {100 * statistics.median(head):.2f}% |")
    print(f"median sd of a case's estimate between the runs of one series ({len(sds[(next(iter(ests)), 'all')])} "
          "series-case pairs)\n" + "\n".join(lines))
    return 0


def reps(dirs, index):
    """Where each series' runs spent their reps: per series, the median of
    each case's reps over its runs and cases (the measured cases, scaling
    copies apart) for the headline system calls (HEADLINE_SYSCALL), the
    other cases of the report's first summary table (the lowest
    category_rank of a summary case: the driver's --headline-reps gives its
    cheap cases more), the other summary-table cases by their cost a rep
    and the other cases; and the median seconds the measured reps of a run
    took."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from kbench.model import load
    rows = []
    for s, runs in series_of(index).items():
        per = collections.defaultdict(list)
        for n in runs:
            run = load.load_run(dirs[n], load.Warnings())
            took = collections.defaultdict(float)
            for _, r, _ in load.iter_jsonl(load.run_file(dirs[n], load.RUNS), load.Warnings()):
                if not r.get("control") and r.get("status") == "ok":
                    took[r["case"]] += r.get("duration_ms", 0.0) / 1000
            per["seconds"].append(sum(took.values()))
            first = min((c.decl.get("category_rank", 1 << 30) for c in run.cases.values()
                         if c.decl.get("summary")), default=None)
            for name, c in run.cases.items():
                if c.control or " x" in name:
                    continue
                k = len(c.reps)
                cost = took[name] / k if k else 0.0
                if HEADLINE_SYSCALL.match(name):
                    per["headline system calls"].append(k)
                elif c.decl.get("summary") and c.decl.get("category_rank", 1 << 30) == first:
                    per["the first table's other cases"].append(k)
                elif c.decl.get("summary"):
                    per["other summary cases, under 30 ms a rep" if cost < 0.03 else
                        "other summary cases, 30 ms a rep or more"].append(k)
                else:
                    per["other cases"].append(k)
        rows.append((s, len(runs), {k: statistics.median(v) for k, v in per.items()}))
    cols = ["headline system calls", "the first table's other cases", "other summary cases, under 30 ms a rep",
            "other summary cases, 30 ms a rep or more", "other cases"]
    print("| series | runs | " + " | ".join(cols) + " | measured seconds |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    for s, n, m in rows:
        print(f"| {s} | {n} | " + " | ".join(f"{m[c]:g}" if c in m else "-" for c in cols) +
              f" | {m['seconds']:.0f} |")
    return 0


def _work(job):
    """One worker's comparisons (a fork of the parent: `_STATE` holds the
    runs' directories and the domains)."""
    dirs, domains = _STATE
    backend = ModelBackend(dirs)
    return [(i, summarise(backend.compare(c), domains, c)) for i, c in job]


_STATE = None


def run_all(cmps, dirs, domains, jobs):
    """Every comparison's figures, in order; `jobs` processes, each taking
    whole series (the runs of a series are read and estimated once)."""
    global _STATE
    _STATE = (dirs, domains)
    by = collections.OrderedDict()
    for i, c in enumerate(cmps):
        by.setdefault(c["series"], []).append((i, c))
    work = [[] for _ in range(max(1, jobs))]
    for part in sorted(by.values(), key=len, reverse=True):
        min(work, key=lambda w: sum(len(c["base"]) + len(c["other"]) for _, c in w)).extend(part)
    if jobs <= 1:
        got = _work(work[0])
    else:
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            got = [x for part in pool.map(_work, [w for w in work if w]) for x in part]
    return [r for _, r in sorted(got, key=lambda x: x[0])]


def markdown(results, today, history):
    lines = report(results, today, " with a held-out history (" + (
        "two runs of the nearest other series of the boot)" if history == "near2" else
        "every A/A run of the boot's other series)"))
    lines += ["", "**Criteria.**", "", "| criterion | figure | met |", "|---|---|---|"]
    lines += [f"| {what} | {fig} | {'yes' if met else 'NO'} |" for what, fig, met in criteria(results, today)]
    return lines


def check(lines, readme=README):
    """The README's block between the markers holds exactly these lines."""
    text = readme.read_text()
    if MARK_BEGIN not in text or MARK_END not in text:
        return [f"{readme}: no {MARK_BEGIN} ... {MARK_END} block"]
    kept = text.split(MARK_BEGIN, 1)[1].split(MARK_END, 1)[0].strip("\n").splitlines()
    new = "\n".join(lines).strip("\n").splitlines()
    return [f"README: {a!r}\nnow:    {b!r}" for a, b in zip(kept, new) if a != b][:10] + \
        ([f"README has {len(kept)} lines, the figures {len(new)}"] if len(kept) != len(new) else [])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--backend", choices=("model", "cli"), default="model")
    ap.add_argument("--tree", default=str(ROOT), help="the tree whose scripts/compare the cli backend runs")
    ap.add_argument("--only", choices=("aa", "k1", "slow"), action="append")
    ap.add_argument("--json", metavar="FILE", help="write every comparison's figures as JSON")
    ap.add_argument("--today", metavar="FILE", default=str(REPLACED) if REPLACED.exists() else None,
                    help="the figures of an older model (--backend cli --json) to show beside (default: the "
                         "model this one replaced, data/run-level/replaced-model.json)")
    ap.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless tests/validation/README.md holds these figures word for word")
    ap.add_argument("--history", choices=("near2", "all"), default="near2",
                    help="the A/A splits' history: two runs of the nearest other series (default) or every "
                         "A/A run of the boot's other series")
    ap.add_argument("--k", type=int, action="append", help="only these runs a side")
    ap.add_argument("--limit", type=int, help="only the first N comparisons (a check of the script)")
    ap.add_argument("--cache", metavar="DIR", help="the cli backend: unpack the kept runs here (kept for the next "
                                                   "call)")
    ap.add_argument("--data", metavar="DIR",
                    help="another directory of runs with its own index.txt (as headline_reps.sh writes it) in "
                         "place of the kept series; no figures of the replaced model beside them")
    ap.add_argument("--from-json", metavar="FILE", help="print the figures of an earlier --json, judging nothing")
    ap.add_argument("--blocks", action="store_true", help="does a run's block drift predict the next run's?")
    ap.add_argument("--sessions", action="store_true", help="what the runs of one session share")
    ap.add_argument("--across", action="store_true",
                    help="A/A across sessions: the sides from two series of one boot, hours apart, with the boot's "
                         "other series as the history")
    ap.add_argument("--which", action="store_true",
                    help="which cases drift between runs: the reps' own noise against the built-in prior")
    ap.add_argument("--faults", metavar="CASE",
                    help="a case's runs against its samples' page faults (ops per minor fault), per series")
    ap.add_argument("--estimators", action="store_true",
                    help="how far each estimator of a case strays between the runs of one series")
    ap.add_argument("--halves", action="store_true",
                    help="the reps' part within one run: odd against even reps, against the bootstrap's errors")
    ap.add_argument("--slopes", action="store_true",
                    help="how the CPU-bound cases follow the CPU speed: their slopes per series")
    ap.add_argument("--bulk", action="store_true",
                    help="the groups' shared factors: per series and, in the A/A splits, their lambda per k")
    ap.add_argument("--tails", action="store_true",
                    help="the unchanged cases' tails per class (system calls, cases that carry state, two-party, "
                         "memory-bound) under t(4), t(8) and normal")
    ap.add_argument("--reps", action="store_true",
                    help="where each series' runs spent their reps: the headline system calls, the other summary "
                         "cases by cost, the rest")
    ap.add_argument("--calibration", action="store_true",
                    help="the A/A splits' differences against their intervals, per k and domain (with --k)")
    args = ap.parse_args(argv)
    global DATA
    if args.data:
        DATA = Path(args.data).resolve()
        if not (DATA / "index.txt").is_file():
            ap.error(f"--data {args.data}: no index.txt there")
        args.today = None
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        today = json.loads(Path(args.today).read_text()) if args.today else None
        print("\n".join(markdown(results, today, args.history)))
        return 0
    index = read_index(DATA)
    names = [n for _, n in index]
    tmpdir = tempfile.mkdtemp(prefix="kbench-run-level-")
    try:
        # the scripts read the kept runs' gzipped JSON Lines where they lie; an older tree's
        # compare (the cli backend) may not: it gets them unpacked
        dirs = unpack(names, Path(args.cache) if args.cache else Path(tmpdir) / "runs", DATA) \
            if args.backend == "cli" else {n: DATA / n for n in names}
        metas = {n: json.loads((dirs[n] / "meta.json").read_text()) for n in names}
        if args.blocks:
            return blocks(dirs, index)
        if args.sessions:
            return sessions(dirs, index, metas)
        if args.across:
            return across(dirs, index, metas, args.jobs)
        if args.which:
            return which(dirs, index)
        if args.calibration:
            return calibration(dirs, index, metas, args.k)
        if args.bulk:
            return bulk(dirs, index, metas)
        if args.tails:
            return tails(dirs, index, metas)
        if args.slopes:
            return slopes(dirs, index, metas)
        if args.halves:
            return halves(dirs, index)
        if args.estimators:
            return estimators(dirs, index)
        if args.reps:
            return reps(dirs, index)
        if args.faults:
            return faults(index, args.faults)
        cmps = [c for c in protocol(index, metas, args.history) if (not args.only or c["kind"] in args.only)
                and (not args.k or c["k"] in args.k)][:args.limit]
        domains = domains_of(dirs, names[:1] + [n for n in names if metas[n].get("cpu_model", "").startswith("Intel")][:1])
        if args.backend == "cli":
            backend = CliBackend(args.tree, Path(tmpdir), dirs)
            results = []
            for i, c in enumerate(cmps):
                results.append(summarise(backend.compare(c), domains, c))
                print(f"[{i + 1}/{len(cmps)}] {c['label']}", file=sys.stderr, flush=True)
        else:
            results = run_all(cmps, dirs, domains, args.jobs)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=0))
        today = json.loads(Path(args.today).read_text()) if args.today else None
        lines = markdown(results, today, args.history)
        print("\n".join(lines))
        if args.check:
            diff = check(lines)
            if diff:
                print("run_level.py: the figures differ from tests/validation/README.md's:\n" + "\n".join(diff),
                      file=sys.stderr)
                return 1
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
