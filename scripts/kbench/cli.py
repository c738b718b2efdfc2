"""Command-line entry points: summarize, compare, plot, report.

Each `*_main(argv) -> int`.  Exit status: 0 done, 1 bad input (nothing
usable) or numpy/matplotlib missing, 2 usage error, 130 interrupted.
Problems with input files are reported as 'FILE:LINE: what' on stderr,
never as a traceback; set KBENCH_DEBUG=1 to see the traceback of an
internal error.
"""
import argparse
import contextlib
import json
import os
import re
import sys
import traceback
from datetime import datetime, timezone
from pathlib import Path

from . import charts
from .deps import missing_dependency
from .model import compare, defaults, drift, explain, groups as groups_mod, history, load, named, prior
from .model import series as series_mod, tables as tables_mod
from .views import compare_text, explain_text, export, html, scaling_text, series_text, summary_text, trends

PROG_DIR = Path(__file__).resolve().parent.parent
ROOT = PROG_DIR.parent


class UsageError(Exception):
    pass


class Failure(Exception):
    """Nothing usable: message on stderr, exit 1."""


def _warn(msg):
    print(f"warning: {msg}", file=sys.stderr, flush=True)


def _guard(prog, fn, argv):
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    try:
        return fn(argv)
    except UsageError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    except (Failure, load.InputError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as e:
        name = f"{e.filename}: " if e.filename else ""
        print(f"{prog}: {name}{e.strerror or e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 -- last resort: no traceback for users
        missing = missing_dependency(prog, e)  # plot and report import matplotlib only here
        if missing is not None:
            print(missing, file=sys.stderr)
            return 1
        if os.environ.get("KBENCH_DEBUG"):
            traceback.print_exc()
        print(f"{prog}: internal error: {type(e).__name__}: {e} "
              f"(set KBENCH_DEBUG=1 for details; please report it)", file=sys.stderr)
        return 1


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _min_effect(text):
    t = text.strip().rstrip("%")
    try:
        v = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= v < 100:
        raise argparse.ArgumentTypeError(f"must be between 0 and 100: {text!r}")
    return v / 100.0


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return v


def _add_stats_options(ap):
    ap.add_argument("--min-effect", type=_min_effect, default=defaults.DEFAULT_MIN_EFFECT, metavar="PCT",
                    help=f"smallest change called faster/slower, in %% (default {defaults.DEFAULT_MIN_EFFECT * 100:g})")
    ap.add_argument("--boot", type=_positive_int, default=defaults.DEFAULT_BOOT, metavar="N",
                    help=f"bootstrap resamples (default {defaults.DEFAULT_BOOT})")
    ap.add_argument("--seed", type=int, default=defaults.DEFAULT_SEED,
                    help=f"bootstrap seed (default {defaults.DEFAULT_SEED}; results are reproducible)")
    ap.add_argument("--min-reps", type=_positive_int, default=defaults.DEFAULT_MIN_REPS, metavar="N",
                    help=f"fewer reps on a side than this gives 'too few reps' (default {defaults.DEFAULT_MIN_REPS})")
    ap.add_argument("--no-adjust", action="store_true",
                    help="judge each case on its own instead of adjusting for the number of cases")
    ap.add_argument("--families", choices=defaults.FAMILIES, default=defaults.DEFAULT_FAMILIES,
                    help="how p is adjusted for the number of cases: tables (default) = the cases behind each "
                         "summary table are a family of their own, every other case another; two = the cases "
                         "behind all the tables one family, the others another; one = all cases together")
    _add_flag_alone(ap)
    ap.add_argument("--estimator", choices=defaults.ESTIMATORS, default=defaults.DEFAULT_ESTIMATOR,
                    help="a case's value over its reps: low = Harrell-Davis 20th percentile of the reps' "
                         "times (default: noise only adds time), median = median of the rep medians")
    _add_prior_options(ap)


def _add_flag_alone(ap):
    ap.add_argument("--flag-alone", action="store_true",
                    help="call a case faster or slower even when it moved alone: by default a case outside the summary "
                         "tables (any case of a file-system-bound binary) that changed significantly with one run on a "
                         "side, while no other case of its binary changed the same way, is inconclusive ('moved "
                         "alone': one run can jump that far for the whole run, one case at a time)")


def _add_prior_options(ap):
    ap.add_argument("--prior", metavar="FILE",
                    help="the drift between runs assumed before this host has two runs of a kernel (default: "
                         "the built-in scripts/kbench/model/drift_prior.json; make one with scripts/drift-prior)")
    ap.add_argument("--no-prior", action="store_true",
                    help="no prior: without the host's own runs the intervals hold the reps' noise only "
                         "(too narrow on a machine that drifts)")
    ap.add_argument("--as-measured", action="store_true",
                    help="every case as measured, not relative to the runs' control cases (the CPU's speed, the "
                         "memory controls), and no guard on the controls' moves")


def _prior(a):
    """The DriftPrior the options ask for, or None (--no-prior)."""
    if getattr(a, "no_prior", False):
        if getattr(a, "prior", None):
            raise UsageError("--prior and --no-prior exclude each other")
        return None
    try:
        return drift.load_prior(getattr(a, "prior", None))
    except drift.PriorError as e:
        if getattr(a, "prior", None):
            raise UsageError(f"--prior: {e}") from None
        raise Failure(f"the built-in drift prior: {e} (reinstall kbench, or give --prior FILE or --no-prior)") \
            from None


def _options(a):
    return compare.Options(min_effect=a.min_effect, n_boot=a.boot, seed=a.seed, min_reps=a.min_reps, adjust=not a.no_adjust,
                           estimator=a.estimator, prior=_prior(a), alone=not a.flag_alone,
                           families=a.families, relative=not a.as_measured)


def _open_out(path):
    if path == "-":
        return sys.stdout, False
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    return open(p, "w", encoding="utf-8", newline=""), True


def _write_csv(path, write, items):
    """write(items, file) to PATH ('-': stdout), if a path was given."""
    if not path:
        return
    f, close = _open_out(path)
    with (f if close else contextlib.nullcontext(f)):
        write(items, f)


# ------------------------------------------------------------ summarize

def _summarize(argv):
    ap = _Parser(prog="summarize", description=(
        "Summary of runs, per kernel: the category tables (one value per quantity, with its unit and the "
        "spread of its reps; ! marks a noisy one), the control cases, power and noise; with --cases every "
        "case with its reps and smallest detectable change (mde).  The value is by default the 20th "
        "percentile of the reps' times.  Runs of one host and kernel are pooled unless --per-run; the CSV "
        "has every case with every figure."))
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="run directory, kernel directory or any directory above runs")
    ap.add_argument("--csv", metavar="FILE", help="also write the summary as CSV ('-' for stdout)")
    ap.add_argument("--json", metavar="FILE", help="with --series: the series (its steps and changes) as JSON "
                    "('-' for stdout)")
    ap.add_argument("--per-run", action="store_true", help="one table per run instead of per kernel")
    ap.add_argument("--cases", action="store_true", help="also list every case (reps, value, spread, mde)")
    _add_flag_alone(ap)
    ap.add_argument("--estimator", choices=defaults.ESTIMATORS, default=defaults.DEFAULT_ESTIMATOR,
                    help="the headline over reps: low = Harrell-Davis 20th percentile of the reps' times "
                         "(default), median = median of the rep medians")
    ap.add_argument("--results", default=str(ROOT / "results"), help=argparse.SUPPRESS)
    _add_series_options(ap)
    _add_history_options(ap)
    _add_prior_options(ap)
    a = ap.parse_args(argv)
    runs = named.load_args(a.dirs, a.results, _warn)
    if not runs:
        raise Failure("no usable run found in " + ", ".join(a.dirs))
    opts = compare.Options(estimator=a.estimator, prior=_prior(a), relative=not a.as_measured)
    if a.series or a.order:
        groups = groups_mod.drop_quick_groups(groups_mod.group_runs(runs, _warn), _warn)
        opts.run_noise = _measured_run_noise(runs, a, opts)
        return _print_series(groups, a, opts)
    if a.json:
        raise UsageError("--json goes with --series (a summary's figures are in --csv)")
    if a.per_run:
        groups = []
        for r in runs:
            g = load.Group(r.host, r.kernel, [r])
            g.cases = r.cases
            groups.append(g)
    else:
        groups = groups_mod.group_runs(runs, _warn)
    opts.run_noise = noise = _measured_run_noise(runs, a, opts)
    compare.estimate_runs(runs, opts)   # what the plans take, by worker processes at once
    print("\n\n".join(_quick_prefix(g) + summary_text.format_group(g, a.estimator, a.cases, noise) for g in groups))
    _write_csv(a.csv, lambda gs, f: summary_text.write_csv(gs, f, noise), groups)
    return 0


def _quick_prefix(group):
    """The one-line note above the summary of quick runs ("" for full runs)."""
    return groups_mod.quick_note(group.label, len(group.runs)) + "\n" if group.quick else ""


def _add_series_options(ap, page=False):
    ap.add_argument("--series", action="store_true",
                    help="a series: the kernels in release order (6.1 < 6.6-rc1 < 6.6 < 6.12), each compared "
                         "with the one before it, and where each case changed " + (
                             "(on top of the page, then a trend chart per summary-table cell)" if page else
                             "(with --csv/--json: the changes)"))
    ap.add_argument("--order", metavar="K1,K2,...",
                    help="the series in this order (kernels or HOST/KERNEL labels; the others are left out); "
                         "implies --series")


def _series_of(groups, a, opts, sides=None, tabs=None):
    """The series of the groups (ordered by --order, else by release)."""
    try:
        ordered, left_out = series_mod.order_groups(groups, series_mod.parse_order(a.order))
    except series_mod.OrderError as e:
        raise UsageError(str(e)) from None
    if len(ordered) < 2:
        raise Failure("a series needs two kernels or more; found " + (", ".join(g.label for g in ordered)
                                                                        or "none"))
    if sides is not None:
        sides = [sides[g.key] for g in ordered]
    res = series_mod.analyse(ordered, opts, sides=sides, tabs=tabs, warn=_warn)
    res.left_out = left_out
    return res


def _print_series(groups, a, opts, sides=None):
    res = _series_of(groups, a, opts, sides)
    print(series_text.format_series(res, opts))
    _write_csv(a.csv, series_text.write_csv, res)
    _write_csv(getattr(a, "json", None), series_text.write_json, res)
    return 0


def summarize_main(argv=None):
    return _guard("summarize", _summarize, sys.argv[1:] if argv is None else argv)


# ------------------------------------------------------------ compare

def _sides_of(path_text, results, role):
    """Sides (one per (host, kernel)) of the runs under one argument."""
    runs = named.load_args([path_text], results, _warn)
    if not runs:
        raise Failure(f"{role} {path_text}: no usable run found")
    groups = groups_mod.group_runs(runs, _warn)
    return [compare.Side.from_group(g, _warn) for g in groups]


def _compare(argv):
    ap = _Parser(prog="compare", description=(
        "Compare kernels case by case against a baseline.  BASE and each OTHER are a run directory, a "
        "kernel directory (its runs are pooled), HOST/KERNEL under --results, or a directory holding "
        "several kernels (each OTHER kernel is compared in turn)."))
    ap.add_argument("base", metavar="BASE")
    ap.add_argument("others", nargs="*", metavar="OTHER")
    ap.add_argument("--changed", action="store_true", help="show only the significantly changed cases")
    ap.add_argument("--only", metavar="REGEX", help="compare only the cases whose name matches (a smaller "
                    "family of cases: the adjustment for their number is milder)")
    ap.add_argument("--csv", metavar="FILE", help="also write every row as CSV ('-' for stdout)")
    ap.add_argument("--json", metavar="FILE", help="also write the comparison as JSON ('-' for stdout); with "
                    "--explain, the explanations too")
    ap.add_argument("--fail-on-regression", action="store_true",
                    help="exit 1 when any case is significantly slower or FAILED on an OTHER kernel (for CI "
                         "gates; a machine shift judges nothing, so it never fails the gate)")
    ap.add_argument("--explain", action="store_true",
                    help="after each comparison, why the cases changed: for every case flagged (faster, slower, "
                         "failed) and every case with profiles on both sides (kbench-run --profile), the "
                         "functions whose share of the profile changed most, the time per operation attributed "
                         "to them, and the kernel event counts per operation that moved")
    ap.add_argument("--results", default=str(ROOT / "results"),
                    help="where HOST/KERNEL arguments are looked up (default: the repository's results/)")
    _add_series_options(ap)
    _add_history_options(ap)
    _add_stats_options(ap)
    a = ap.parse_args(argv)
    opts = _options(a)
    if a.series or a.order:
        clash = [o for o, v in (("--changed", a.changed), ("--explain", a.explain),
                                ("--fail-on-regression", a.fail_on_regression)) if v]
        if clash:
            raise UsageError(f"{', '.join(clash)}: not with --series (its changes are the series' own list)")
        return _compare_series(a, opts)
    if not a.others:
        raise UsageError("give an OTHER kernel to compare with BASE (or --series for a series of kernels)")
    bases = _sides_of(a.base, a.results, "BASE")
    if len(bases) > 1 and (own := named.named_after(bases, a.base, a.results)) is not None:
        _warn(f"BASE {a.base} holds runs of {len(bases)} kernels: taking {own.label}; the others by their names: "
              + ", ".join(s.label for s in bases if s is not own))
        bases = [own]
    if len(bases) > 1:
        raise UsageError(f"BASE {a.base} holds runs of several kernels (" + ", ".join(s.label for s in bases)
                         + f"); give the directory of one kernel, or its name as the tables print it (looked up "
                         f"under --results): e.g. scripts/compare '{bases[0].label}' '{bases[1].label}'")
    base, only = bases[0], _regex(a.only)
    if only is not None:
        base.cases = {k: v for k, v in base.cases.items() if v.control or only.search(k)}
    base_label, reports, sides = base.label, [], []
    for o in a.others:
        for side in _sides_of(o, a.results, "OTHER"):
            if only is not None:
                side.cases = {k: v for k, v in side.cases.items() if v.control or only.search(k)}
            if side.id == base.id:
                _warn(f"{o}: the same runs as BASE; comparing them with themselves")
            if side.label == base_label:
                base.label = f"{base_label} [{_short_id(base)}]"
                side.label = f"{side.label} [{_short_id(side)}]"
            sides.append(side)
    _some_case_matches(only, a.only, [base] + sides)
    counted = groups_mod.counters_warning([(s.label, s.runs) for s in [base] + sides])
    if counted:
        _warn(counted)
    opts.run_noise = _run_noise([base] + sides, a, opts)
    runs = [r for s in [base] + sides for r in s.runs]      # their estimates by worker processes, at once:
    compare.estimate_runs(runs, opts, len({r.host for r in runs}) == 1)    # a history only within one host
    for side in sides:
        reports.append(compare.run_compare(base, side, opts))
    print("\n\n".join(compare_text.format_report(r, a.changed, opts) for r in reports))
    for lines in (scaling_text.compare_lines(r, opts) for r in reports):  # copies at once (scaling.py)
        if lines:
            print("\n".join(lines))
    if a.explain:
        for r in reports:
            r.explanations = explain.explain_report(r)
            print("\n" + explain_text.format_explanations(r.explanations, r.base.label, r.other.label))
    _write_csv(a.csv, export.write_csv, reports)
    _write_csv(a.json, export.write_json, reports)
    if a.fail_on_regression:
        bad = [(r.other.label, row.case) for r in reports for row in compare.regressions(r)]
        if bad:
            print(f"compare: --fail-on-regression: {len(bad)} regression(s): "
                  + ", ".join(f"{case} ({label})" for label, case in bad[:10]) + (" ..." if len(bad) > 10 else ""),
                  file=sys.stderr)
            return 1
    return 0


def _compare_series(a, opts):
    """compare --series: every kernel under BASE and the OTHERs, a series."""
    runs = named.load_args([a.base] + a.others, a.results, _warn)
    if not runs:
        raise Failure("no usable run found in " + ", ".join([a.base] + a.others))
    groups = groups_mod.drop_quick_groups(groups_mod.group_runs(runs, _warn), _warn)
    sides = {g.key: compare.Side.from_group(g) for g in groups}
    only = _regex(a.only)
    if only is not None:
        for x in list(groups) + list(sides.values()):
            x.cases = {k: v for k, v in x.cases.items() if v.control or only.search(k)}
        _some_case_matches(only, a.only, list(sides.values()))
    opts.run_noise = _run_noise(list(sides.values()), a, opts)
    return _print_series(groups, a, opts, sides)


def _add_history_options(ap):
    ap.add_argument("--history", action="append", default=[], metavar="DIR",
                    help="runs of this host kept elsewhere: every kernel there with two runs or more measures "
                         "how far whole runs drift (the run level); repeatable")
    ap.add_argument("--no-history", action="store_true",
                    help="do not look for other runs under the compared runs' host directories (the run level "
                         "then comes from the compared kernels' own runs and --history only)")


def _run_noise(sides, a, opts):
    """{host: RunNoise} of compare: the sides' runs and their history (model/history.py)."""
    try:
        return history.run_noise(sides, opts, a.history, a.no_history, _warn)
    except history.HistoryError as e:
        raise UsageError(str(e)) from None


def _measured_run_noise(runs, a, opts):
    """{host: RunNoise} of summarize: the runs and their history, grouped by kernel."""
    try:
        return history.measured_run_noise(runs, opts, a.history, a.no_history, _warn)
    except history.HistoryError as e:
        raise UsageError(str(e)) from None


def _regex(text):
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise UsageError(f"--only {text!r}: not a valid regular expression: {e}") from None


def _some_case_matches(only, text, sides):
    """--only that leaves no case but the controls on every side: a usage
    error, not a comparison of nothing."""
    if only is not None and not any(not c.control for s in sides for c in s.cases.values()):
        raise UsageError(f"--only {text!r}: no case of these runs matches (a case is named as in compare's "
                         f"case column, BINARY VARIANT [PARAMS]; --only is a regular expression searched in it)")


def _short_id(side):
    ids = sorted(r.run_id for r in side.runs)
    return ids[0] if len(ids) == 1 else f"{ids[0]} +{len(ids) - 1}"


def compare_main(argv=None):
    return _guard("compare", _compare, sys.argv[1:] if argv is None else argv)


# ------------------------------------------------------------ plot and report

def _pick_baseline(groups, spec):
    if not spec:
        return groups[0]
    for g in groups:
        if spec in (g.label, g.kernel) or spec.strip("/") == g.label:
            return g
    matches = [g for g in groups if g.label.endswith("/" + spec) or g.kernel.startswith(spec)]
    if len(matches) == 1:
        return matches[0]
    raise UsageError(f"--baseline {spec!r} matches " + (
        "several kernels: " + ", ".join(g.label for g in matches) if matches else
        "no kernel found; there are: " + ", ".join(g.label for g in groups)))


def _analyse(dirs, baseline_spec, opts, series_args=None, meanwhile=None, results=None):
    """Runs -> (groups, baseline, tables, comparisons, warnings, machine shifts,
    the series or None, what meanwhile started or None).  series_args: the
    options of a series (--series, --order): the groups in its order, the
    first one the baseline unless --baseline says otherwise.  meanwhile:
    fn(groups) that starts, once the groups are read, what needs the runs
    alone in second processes (a charts.Background or charts.page_parts),
    while this one compares them."""
    w = load.Warnings(_warn)
    runs = named.load_args(dirs, results, w)    # directories, or HOST/KERNEL under `results`
    if not runs:
        raise Failure("no usable run found in " + ", ".join(str(d) for d in dirs))
    groups = groups_mod.drop_quick_groups(groups_mod.group_runs(runs, w), w)
    for g in groups:
        if g.quick:
            w(groups_mod.quick_note(g.label, len(g.runs))[len("note: "):])
    if not any(g.cases for g in groups):
        raise Failure("the runs found hold no usable samples")
    series = None
    if series_args is not None:
        try:
            ordered, left_out = series_mod.order_groups(groups, series_mod.parse_order(series_args.order))
        except series_mod.OrderError as e:
            raise UsageError(str(e)) from None
        groups = ordered + left_out
    baseline = _pick_baseline(groups, baseline_spec)
    groups = [baseline] + [g for g in groups if g is not baseline]
    if len(groups) > 1:     # each run's estimates, which every comparison takes, by worker processes
        compare.estimate_runs([r for g in groups for r in g.runs], opts)
    early = meanwhile(groups) if meanwhile is not None else None
    tabs = tables_mod.build_tables(groups)
    sides = {g.key: compare.Side.from_group(g, w) for g in groups}
    # the run level: every kernel here with two runs or more measures its host's drift between runs
    opts.run_noise = compare.measure_run_noise([g.runs for g in groups], opts)
    comparisons = {}
    shifts = {}
    for g in groups[1:]:
        shifts[g.key] = compare.compare_controls(sides[baseline.key], sides[g.key], opts)
        fits = []
        rows, cells = compare.compare_tables(sides[baseline.key], sides[g.key], tabs, baseline.key, g.key, opts,
                                             shift=shifts[g.key], fits=fits)
        # with the two-party groups their own bulk widened: the page says so per kernel, as compare does
        comparisons[g.key] = (rows, cells, fits[0].bulk if fits else {})
    if series_args is not None:
        series = _series_of(ordered, series_args, opts, sides, tabs)
        series.left_out = left_out
    return groups, baseline, tabs, comparisons, w.messages, shifts, series, early


def _formats(text):
    fmts = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in ("png", "svg", "pdf")]
    if bad or not fmts:
        raise argparse.ArgumentTypeError(f"formats are png, svg, pdf: {text!r}")
    return tuple(fmts)


def _add_chart_options(ap):
    """What plot and report share: the runs, the baseline, the charts, and
    the statistics options."""
    ap.add_argument("dirs", nargs="*", metavar="DIR", help="run directories, directories above runs, or kernels "
                    "by the name the tables print (HOST/KERNEL, looked up under --results)")
    ap.add_argument("--results", default=str(ROOT / "results"),
                    help="where HOST/KERNEL arguments are looked up (default: the repository's results/)")
    ap.add_argument("--baseline", metavar="HOST/KERNEL", help="the kernel the others are compared with "
                    "(default: the first in natural order)")
    ap.add_argument("--formats", type=_formats, default=("png", "svg"),
                    help="chart formats, comma-separated: png,svg,pdf (default png,svg)")
    _add_stats_options(ap)


def _plot(argv):
    ap = _Parser(prog="plot", description=(
        "Charts of the runs under DIRs (default: results/): per category, bars of each kernel relative to "
        "the baseline with confidence intervals; every size-swept case that declares a curve, against size; "
        "the scaling curves; with --samples, per bench and variant, every raw sample of every kernel."))
    ap.add_argument("--out", default=str(ROOT / "plots"), help="directory for the charts (default plots/)")
    ap.add_argument("--samples", action="store_true",
                    help="also the raw-sample charts, one per bench and variant (many files, the slow part)")
    ap.add_argument("--no-samples", action="store_true", help=argparse.SUPPRESS)   # the default since --samples
    _add_chart_options(ap)
    a = ap.parse_args(argv)
    if a.samples and a.no_samples:
        raise UsageError("--samples and --no-samples exclude each other")
    dirs = a.dirs or [a.results]
    out = Path(a.out)
    groups, baseline, _, comparisons, _, _, _, early = _analyse(
        dirs, a.baseline, _options(a), meanwhile=lambda gs: charts.Background(
            lambda: charts.run_charts(gs, out, a.formats, a.samples, a.estimator)), results=a.results)
    bars = charts.bars(groups, comparisons, out, a.formats)
    curves, strips = early.result()
    n = sum(len(v) for v in bars.values()) + sum(len(v) for v in curves.values()) \
        + len({str(p) for p in strips.values()}) * len(a.formats)
    print(f"wrote {n} chart file(s) to {a.out}")
    return 0


def plot_main(argv=None):
    return _guard("plot", _plot, sys.argv[1:] if argv is None else argv)


def _report(argv):
    ap = _Parser(prog="report", description=(
        "Find every run under DIRs (default: results/) and write one self-contained HTML page (its charts "
        "embedded: it works copied alone anywhere) with the summary tables (coloured against the baseline), "
        "charts, every case, the machines' metadata and links to the raw files that sit beside it."))
    ap.add_argument("--out", default=str(ROOT / "results" / "index.html"), help="the page (default results/index.html)")
    ap.add_argument("--plots", default=None, metavar="DIR", help="also write the charts as files (--formats) to DIR "
                    "(default: none; the page does not need them)")
    ap.add_argument("--no-samples", action="store_true", help="leave the raw-sample charts out of the page")
    _add_series_options(ap, page=True)
    ap.add_argument("--bisect", action="append", default=[], metavar="LOG",
                    help="also show a bisection's steps from the log scripts/bisect-step wrote (repeatable)")
    _add_chart_options(ap)
    a = ap.parse_args(argv)
    dirs = a.dirs or [a.results]
    opts = _options(a)
    bisect = []
    for path in a.bisect:
        try:
            steps, bad = trends.read_bisect_log(path)
        except OSError as e:
            raise Failure(f"--bisect {path}: {e.strerror or e}") from None
        if bad:
            _warn(f"--bisect {path}: {bad} line(s) that are not a step, skipped")
        bisect.append((path, steps))
    plots_dir = Path(a.plots) if a.plots else None
    groups, baseline, tabs, comparisons, warnings, shifts, series, early = _analyse(
        dirs, a.baseline, opts, a if (a.series or a.order) else None,
        meanwhile=lambda gs: charts.page_parts(gs, opts.estimator, not a.no_samples, plots_dir, a.formats),
        results=a.results)
    # the bars (none with one kernel) in a second process too: html.render waits for them and early last
    bars = charts.Background(lambda: charts.bars(groups, comparisons, plots_dir, a.formats if plots_dir is not None
                                                 else ("svg",))) if len(groups) > 1 else {}
    model = html.Model(groups=groups, baseline=baseline, tables=tabs, comparisons=comparisons, opts=opts,
                       bars=bars, strips={} if a.no_samples else None, later=early, warnings=warnings,
                       shifts=shifts, series=series, bisect=bisect,
                       generated=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    page = html.render(model, out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    print(f"{len(groups)} kernel(s), {sum(len(g.runs) for g in groups)} run(s); baseline {baseline.label}")
    for g in groups[1:]:
        rows = comparisons[g.key][0]
        f = sum(r.cmp.verdict == "significantly faster" for r in rows)
        s = sum(r.cmp.verdict == "significantly slower" for r in rows)
        shift = shifts.get(g.key)
        note = (f"; MACHINE SHIFT: the control cases ran {shift.change_text} (no verdicts)"
                if shift is not None and shift.shifted else "")
        nj = "".join(f", {len(cases)} not judged ({reason})"
                     for reason, cases in compare_text.not_judged_reasons(rows).items())
        print(f"  {g.label}: {f} case(s) significantly faster, {s} significantly slower{nj}, of {len(rows)}{note}")
    if series is not None:
        print(f"series of {len(series.groups)} kernels: {len(series.changes)} change(s)"
              + "".join(f"\n  {ch.case}: {_change_line(ch, series)}" for ch in series.changes[:10]))
    print(f"wrote {out} ({len(page.encode('utf-8')) / 1e6:.1f} MB, charts embedded)"
          + (f" and the charts in {plots_dir}" if plots_dir is not None else ""))
    return 0


def _change_line(ch, res):
    return f"{series_text.change_words(ch, res)} at {res.label(ch.index)} (from {res.label(ch.index - 1)})"


def report_main(argv=None):
    return _guard("report", _report, sys.argv[1:] if argv is None else argv)


# ------------------------------------------------------------ drift prior

def _drift_prior(argv):
    ap = _Parser(prog="drift-prior", description=(
        "Make the drift prior (scripts/kbench/model/drift_prior.json by default) from A/A runs: runs of one kernel "
        "made at different moments (make run, several times, nothing changed between them).  Every kernel "
        "with two runs or more on a host is one group; each case's spread of its runs' estimates beyond their "
        "reps' noise, moderated across cases, times --inflate, is its tau (log units) with its degrees of "
        "freedom.  compare, summarize and the page use it until the host has runs of its own."))
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="directories holding the A/A runs")
    ap.add_argument("--out", default=str(drift.PRIOR_FILE), help="the file to write (default: the built-in one)")
    ap.add_argument("--machine", default="", help="what the runs were made on, in words (kept in the file)")
    ap.add_argument("--inflate", type=float, default=drift.DEFAULT_INFLATE, metavar="X",
                    help=f"widen each case's variance by X (default {drift.DEFAULT_INFLATE:g}: conservative)")
    _add_flag_alone(ap)
    ap.add_argument("--estimator", choices=defaults.ESTIMATORS, default=defaults.DEFAULT_ESTIMATOR,
                    help=f"as compare's (default {defaults.DEFAULT_ESTIMATOR})")
    ap.add_argument("--at-least", metavar="FILE",
                    help="an earlier prior (e.g. the built-in one, made on other boots or machines): each case's "
                         "tau is never below that prior's, so that the new prior covers the drift of every "
                         "machine either was measured on; give runs that are not among its own")
    a = ap.parse_args(argv)
    earlier = None
    if a.at_least:
        try:
            earlier = drift.load_prior(a.at_least)
        except drift.PriorError as e:
            raise UsageError(f"--at-least: {e}") from None
    if not 1.0 <= a.inflate <= 100.0:
        raise UsageError(f"--inflate must be between 1 and 100, got {a.inflate:g}")
    w = load.Warnings(_warn)
    runs = [r for r in load.load_runs([Path(d) for d in a.dirs], w) if not r.quick]
    if not runs:
        raise Failure("no usable full run (quick runs do not count) in " + ", ".join(a.dirs))
    groups_mod.split_identities(runs)
    by_kernel = {}
    for r in runs:
        by_kernel.setdefault((r.host, r.key, (r.meta or {}).get("suite_version")), []).append(r)
    lists = [rs for rs in by_kernel.values() if len(rs) >= 2]
    if not lists:
        raise Failure("no kernel with two runs or more: an A/A prior needs runs of one kernel made at "
                      "different moments")
    try:
        taus, source, method, used, boots = prior.make(lists, runs, a.estimator, a.inflate, a.machine, earlier,
                                                       Path(a.at_least).name if a.at_least else "")
    except prior.NoCases as e:
        raise Failure(str(e)) from None
    except prior.Overlap as e:
        raise UsageError(f"--at-least: {a.at_least} {e}") from None
    obj = drift.to_json(taus, source, method, prior.shared_benches(used))
    text = json.dumps(obj, indent=1, sort_keys=False) + "\n"
    out = Path(a.out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    ts = sorted(t for t, _ in taus.values())
    widened = "" if earlier is None else (f"; each at least {Path(a.at_least).name}'s: in all "
                                          f"{source['runs']} runs on {source['boots']} boots")
    print(f"drift-prior: {len(taus)} cases from {len(used)} runs of {len(lists)} kernel(s) on {len(boots)} "
          f"boot(s): tau median {ts[len(ts) // 2] * 100:.1f}%, 90th percentile "
          f"{ts[int(0.9 * (len(ts) - 1))] * 100:.1f}%, max {ts[-1] * 100:.1f}%{widened}; written to {out}",
          file=sys.stderr)
    return 0


def drift_prior_main(argv=None):
    return _guard("drift-prior", _drift_prior, sys.argv[1:] if argv is None else argv)
