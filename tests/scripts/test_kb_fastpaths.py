"""The fast paths of loading and of the statistics give exactly what the
plain way gives: read_samples (one decoder, the scanner alone on clean
lines, a case's identity worked out once, the checks written out) against
a line-by-line reading with json.loads and load's own checks, on clean and
damaged lines and on the recorded run; the scaling reader's filter against
no filter; the bootstrap drawn and sorted in blocks against the whole
resample matrix at once (the same draws, bit for bit)."""
import json
import math
import os

import numpy as np
import pytest

from kb_helpers import HERE  # noqa: F401  (puts scripts/ on sys.path)

from kbench.model import bootstrap, load, scaling, stats, workers  # noqa: E402


def _reference_samples(path, run_id, warn):
    """read_samples written plainly, as it was before its fast path: each
    line through json.loads, then load's own checks of a line."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    truncated_last = bool(data) and not data.endswith(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    cases = {}
    bad = 0

    def bad_line(lineno, why):
        nonlocal bad
        bad += 1
        if bad <= load.MAX_LINE_WARNINGS:
            warn(f"{path}:{lineno}: {why}; line skipped")

    schema_warned = False
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"), parse_constant=load._reject_constant)
        except UnicodeDecodeError:
            bad_line(lineno, "not valid UTF-8")
            continue
        except ValueError as e:
            bad_line(lineno, "truncated last line (the writer was interrupted?)"
                     if lineno == len(lines) and truncated_last else f"invalid JSON: {getattr(e, 'msg', e)}")
            continue
        if not isinstance(obj, dict):
            bad_line(lineno, f"expected a JSON object, found {load._json_type(obj)}")
            continue
        schema = obj.get("schema", load.SUPPORTED_SCHEMA)
        if load._is_int(schema) and schema > load.SUPPORTED_SCHEMA and not schema_warned:
            warn(f"{path}:{lineno}: schema {schema} is newer than this script knows "
                 f"({load.SUPPORTED_SCHEMA}); reading the keys it knows")
            schema_warned = True
        ident = load.case_identity(obj)
        if isinstance(ident, str):
            bad_line(lineno, ident)
            continue
        name, bench, variant, params, placement = ident
        rep = obj.get("rep_idx")
        if not load._is_int(rep) or rep < 0:
            bad_line(lineno, f"'rep_idx' is {rep!r}, expected a non-negative integer")
            continue
        value, err = load._sample_value(obj)
        if err:
            bad_line(lineno, err)
            continue
        metric = obj["metric"]
        c = cases.get(name)
        if c is None:
            c = cases[name] = load.Case(name, bench, variant, params, placement, metric)
        elif c.metric != metric:
            bad_line(lineno, f"case {name!r} was {c.metric} on earlier lines, {metric} here")
            continue
        rid = obj.get("run_id")
        if not isinstance(rid, str) or not rid:
            rid = run_id
        key = (rid, rep)
        c.reps.setdefault(key, []).append(value)
        if obj.get("control") is True:
            c.control = True
        if load._disturbed(obj):
            c.disturbed.add(key)
        b = load.blocked_share(obj)
        if b is not None:
            c.blocked.setdefault(key, []).append(b)
        c.without.update(k for k, v in obj.items() if v == "unavailable")
        t0 = obj.get("t_start_ns")
        if load._is_int(t0) and t0 >= 0:
            prev = c.rep_start.get(key)
            c.rep_start[key] = t0 if prev is None else min(prev, t0)
        iters = obj.get("iters")
        if load._is_int(iters) and iters > 0 and metric == "latency":
            for k in load.EVENT_KEYS:
                v = obj.get(k)
                if load._is_int(v) and v > 0:
                    c.per_event.setdefault(k, {}).setdefault(key, []).append(value * iters / v)
        if load._is_int(iters) and iters > 0:
            for k in load.COUNTER_KEYS:
                v = obj.get(k)
                if v is not None and load._is_num(v) and math.isfinite(v) and v >= 0:
                    c.counters.setdefault(k, {}).setdefault(key, []).append(v / iters)
    if bad > load.MAX_LINE_WARNINGS:
        warn(f"{path}: {bad - load.MAX_LINE_WARNINGS} more bad lines skipped ({bad} in all)")
    return cases, bad


def _line(**kw):
    base = {"schema": 1, "run_id": "r1", "bench": "lat_x", "variant": "v", "params": "n=1",
            "placement": "unpinned", "metric": "latency", "rep_idx": 0, "sample_idx": 0, "iters": 100,
            "elapsed_ns": 10000, "ns_per_op": 100.5, "utime_ns": 2000, "stime_ns": 7000, "run_delay_ns": 0,
            "steal_ns": 0, "t_start_ns": 5, "minflt": 3, "majflt": 0, "nvcsw": 1, "nivcsw": 0}
    for k, v in kw.items():
        if v is KeyError:
            base.pop(k, None)
        else:
            base[k] = v
    return json.dumps(base)


LINES = [
    _line(), _line(rep_idx=1, ns_per_op=101, t_start_ns=3), _line(rep_idx=1, t_start_ns=9, run_delay_ns=1500),
    _line(rep_idx=2, steal_ns=600, run_delay_ns=500.5, utime_ns=9000.25),
    _line(metric="bandwidth", bench="bw_x", bytes_per_op=4096, ns_per_op=12.0),
    _line(metric="bandwidth", bench="bw_x", bytes_per_op=4096.5, ns_per_op=13),
    _line(metric="bandwidth", bench="bw_x", bytes_per_op=None),
    _line(bench="lat_x", params=None, rep_idx=3), _line(params=KeyError, rep_idx=3),
    _line(case="lat_x v n=1", rep_idx=4), _line(bench=1, case="lat_y w"), _line(bench=True, case="lat_y w"),
    _line(bench=1.0, case="lat_y w", rep_idx=2), _line(bench=[1], case="lat_y w"), _line(bench={"a": 1}),
    _line(bench=""), _line(bench=1), _line(variant=None), _line(params=5), _line(placement=["same"]),
    _line(placement="same", bench="lat_ctx", variant="ring"), _line(placement=KeyError, partner_cpu=1,
                                                                    bench="lat_ctx", variant="ring"),
    _line(placement="cross", bench="lat_ctx", variant="ring", partner_cpu=None),
    _line(bench="lat_ctx", variant="ring", partner_cpu=1), _line(bench="lat_ctx", variant="ring", partner_cpu=None),
    _line(bench="lat_ctx", variant="ring", rep_idx=1), _line(bench="lat_ctx", variant="ring", partner_cpu=0),
    _line(case="lat_pipe rt @same", bench=KeyError, variant=KeyError, placement=KeyError),
    _line(case=7), _line(case=" "), _line(rep_idx=True), _line(rep_idx=-1), _line(rep_idx=1.0),
    _line(ns_per_op=True), _line(ns_per_op=0.0), _line(ns_per_op=-3.5), _line(ns_per_op="12"), _line(metric="x"),
    _line(metric="bandwidth", bytes_per_op=10, rep_idx=6),  # the case was latency: a conflicting line
    _line(run_id="", rep_idx=5), _line(run_id=None, rep_idx=5), _line(run_id="r2"), _line(control=True, rep_idx=7),
    _line(control=1, rep_idx=7), _line(thp="unavailable", numa="unavailable"), _line(x=["unavailable"]),
    _line(elapsed_ns=0), _line(elapsed_ns=True), _line(elapsed_ns=2.5e4, utime_ns=None),
    _line(elapsed_ns=1000, utime_ns=900, stime_ns=900), _line(run_delay_ns=True, steal_ns="9"),
    _line(t_start_ns=-1, rep_idx=8), _line(t_start_ns=1.5, rep_idx=8), _line(t_start_ns=True, rep_idx=8),
    _line(iters=0), _line(iters=True), _line(iters=5.0), _line(minflt=True, nvcsw=0, majflt=2),
    _line(instructions=1000, cycles=None, branches=-1, cache_misses=2.5, task_clock_ns=True, rep_idx=9),
    _line(instructions=10, metric="bandwidth", bench="bw_x", bytes_per_op=8, rep_idx=9),
    _line(schema=2), _line(schema=3), _line(schema="9"), _line(schema=None),
    _line(ns_per_op=10 ** 30), _line(ns_per_op=2.5e-300),
    '{"schema": 1, "\\u0063ase": "lat_esc v", "metric": "latency", "rep_idx": 0, "ns_per_op": 5.0}',
    '  ' + _line(rep_idx=10), _line(rep_idx=11) + '  ', _line(rep_idx=12) + '\r', '\x0c', '   ', '',
    '[1, 2]', '"text"', 'null', '{"a": NaN}', '{"a": Infinity}', _line(ns_per_op=1.0)[:-1] + ', "z": -Infinity}',
    '{"a": 1} {"b": 2}', '{"a": 1},', '{broken', _line() + _line(),
    '{"a": [' * 5 + ']' * 5 + '}',
]


def _write(path, lines, tail=b""):
    data = b"\n".join(l.encode("utf-8") for l in lines) + b"\n"
    data = data.replace(b'"bad-utf8"', b'"\xff\xfe"') + tail
    path.write_bytes(data)


def _state(cases):
    return {n: (c.name, c.bench, c.variant, c.params, c.placement, c.metric, c.control, c.reps, c.counters,
                c.disturbed, c.rep_start, c.without, c.per_event, c.blocked) for n, c in cases.items()}


def _same_reading(path):
    """read_samples and the plain reading agree on every value (its type
    and sign too), every bad line and every message."""
    w1, w2 = load.Warnings(), load.Warnings()
    got, bad = load.read_samples(path, "fallback", w1)
    want, want_bad = _reference_samples(path, "fallback", w2)
    assert bad == want_bad
    assert repr(_state(got)) == repr(_state(want))
    assert w1.messages == w2.messages
    return got, w1.messages


def _is_good(line):
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and line == line.strip() and "bench" in obj and "rep_idx" in obj


def test_read_samples_is_the_plain_reading_on_every_kind_of_line(tmp_path):
    p = tmp_path / "samples.jsonl"
    _write(p, LINES + ['{"schema": 1, "bench": "bad-utf8"}'])
    cases, msgs = _same_reading(p)
    assert "lat_x v n=1" in cases and "lat_y w" in cases and "lat_esc v" in cases
    assert cases["lat_x v n=1"].without == {"thp", "numa"}
    assert any("more bad lines skipped" in m for m in msgs)
    # a few lines at a time after the good ones: every bad line's own message
    good = [line for line in LINES if _is_good(line)]
    for start in range(0, len(LINES), 3):
        _write(p, good + LINES[start:start + 3])
        _same_reading(p)
    _write(p, ['{"schema": 1, "bench": "bad-utf8", "variant": "v"}'] + good)
    assert any("not valid UTF-8" in m for m in _same_reading(p)[1])


def test_read_samples_on_a_truncated_last_line_and_the_recorded_run(tmp_path):
    p = tmp_path / "samples.jsonl"
    _write(p, LINES[:3], tail=_line(rep_idx=4)[:30].encode())
    _, msgs = _same_reading(p)
    assert any("truncated last line" in m for m in msgs)
    recorded = sorted((HERE.parent / "data" / "recorded").rglob("samples.jsonl"))
    assert recorded
    for path in recorded:
        _same_reading(path)


def test_scaling_reads_only_the_lines_of_copies_and_misses_none(tmp_path, monkeypatch):
    lines = []
    for r in range(2):
        for c in range(2):
            lines.append(_line(case="lat_x v x2", rep_idx=r, copies=2, copy_idx=c, elapsed_ns=1000 + c))
    esc = json.loads(_line(case="lat_x v x2", rep_idx=2, copy_idx=0, elapsed_ns=1000))
    lines.append(json.dumps(esc)[:-1] + ', "\\u0063opies": 2}')       # the key written with an escape
    lines.append(json.dumps(esc).replace('"copy_idx": 0', '"copy_idx": 1')[:-1] + ', "copies": 2}')
    lines += [_line(rep_idx=r) for r in range(3)]
    d = tmp_path / "h" / "k" / "r1"
    d.mkdir(parents=True)
    (d / "meta.json").write_text(json.dumps({"schema": 1, "run_id": "r1", "host": "h", "kernel_release": "k"}))
    (d / "samples.jsonl").write_text("\n".join(lines) + "\n")
    run = load.load_run(d, lambda m: None)
    got = scaling.read_run(run)
    # the same without the filter
    monkeypatch.setattr(scaling, "_RUNS", {})
    monkeypatch.setattr(scaling, "_may_be_a_copy", lambda line: True)
    assert scaling.read_run(run) == got
    assert sorted(got["lat_x v x2"]["reps"]) == [("r1", 0), ("r1", 1), ("r1", 2)]


def test_sorting_networks_sort_every_input():
    """By the 0-1 principle: a network that sorts every vector of 0s and
    1s sorts every vector."""
    for n in range(1, stats.NETWORK_MAX + 1):
        x = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)
        for i, j in stats.sorting_network(n):
            lo, hi = np.minimum(x[:, i], x[:, j]), np.maximum(x[:, i], x[:, j])
            x[:, i], x[:, j] = lo, hi
        assert (np.diff(x, axis=1) >= 0).all(), n


@pytest.mark.parametrize("estimator", stats.ESTIMATORS)
@pytest.mark.parametrize("n,n_boot,zeros", [(2, 2000, 0.0), (5, 2000, 0.0), (5, 2001, -0.0), (15, 2000, 0.0),
                                            (16, 2000, 0.0), (17, 999, -0.0), (50, 2000, 0.0), (50, 2000, -0.0),
                                            (333, 7, 0.0), (9000, 3, 0.0), (4, 1, 0.0), (8, 8, 0.0),
                                            (1, 1, 0.0)])
def test_bootstrap_in_blocks_is_the_whole_matrix_at_once(estimator, n, n_boot, zeros):
    """Sorted by a network or counted (NETWORK_MAX), with ties and zeros of
    either sign (a latency of 1 ns is a log time of 0.0, a bandwidth of
    1 MB/s one of -0.0); as many resamples as reps (the network's columns
    and the resamples' rows then have one shape: two matrices all the
    same)."""
    y = np.log(np.random.default_rng(n).lognormal(7.0, 0.3, n))
    y[n // 2] = y[0]        # a tie
    y[1::7] = zeros
    want = stats.estimate(y[stats.seeded_rng(1, "side", str(n)).integers(0, n, size=(n_boot, n))], estimator)
    got = stats.boot_estimates(y, n_boot, stats.seeded_rng(1, "side", str(n)), estimator)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    # the reused matrix is not the result: another bootstrap of the shape leaves it as it was
    stats.boot_estimates(y[::-1].copy(), n_boot, stats.seeded_rng(2, "other"), estimator)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("estimator", stats.ESTIMATORS)
@pytest.mark.parametrize("n_boot", [2000, 999, 7, 1])
def test_bootstraps_made_together_are_each_made_alone(estimator, n_boot, monkeypatch):
    """boot_many: cases of as many reps sorted by one network (in batches,
    BATCH_CASES at a time, here 3 for few cases), the same numbers to the
    last bit as each bootstrapped alone, whatever their order; those of
    one rep or more than NETWORK_MAX reps bootstrapped alone."""
    monkeypatch.setattr(bootstrap, "BATCH_CASES", 3)
    ys = []
    for i, n in enumerate([13, 2, 14, 13, 1, 17, 13, 16, 13, 13, 5, 40, 14]):
        y = np.log(np.random.default_rng(i).lognormal(7.0, 0.3, n))
        if n > 3:
            y[n // 2] = y[0]                    # a tie
            y[1::5] = 0.0 if i % 2 else -0.0    # zeros of either sign
        ys.append(y)
    want = [stats.boot_estimates(y, n_boot, stats.seeded_rng(3, "case", str(i)), estimator) for i, y in enumerate(ys)]
    got = bootstrap.boot_many(ys, n_boot, [stats.seeded_rng(3, "case", str(i)) for i in range(len(ys))], estimator)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
    # and each batch's matrix, reused, is not a result
    bootstrap.boot_many(ys[::-1], n_boot, [stats.seeded_rng(4, "x", str(i)) for i in range(len(ys))], estimator)
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]


def test_side_estimates_are_each_side_estimate(monkeypatch):
    """side_estimates of many series (plain cases, a cell of two cases, a
    series of several runs, one of one rep, one of none): each
    side_estimate's answer, field by field."""
    monkeypatch.setattr(bootstrap, "BATCH_CASES", 2)
    g = np.random.default_rng(5)
    reps = lambda n, m=100.0: [g.lognormal(np.log(m), 0.05, 3) for _ in range(n)]  # noqa: E731
    items = [stats.Series.single(reps(13), label="a"), stats.Series.single(reps(13), label="b"),
             stats.Series.single(reps(14), "bandwidth", "c"), stats.Series.single(reps(1), label="d"),
             stats.Series.single([], label="e"),
             stats.Series.single(reps(12), label="f", units=["r1"] * 6 + ["r2"] * 6),
             stats.Series([(a, b) for a, b in zip(reps(13), reps(13, 50.0))], lambda v: (v[0] + v[1]) / 2.0,
                          label="cell"),
             stats.Series.single(reps(13), label="g")]
    for estimator in stats.ESTIMATORS:
        want = [stats.side_estimate(s, 400, stats.seeded_rng(1, s.label), estimator) for s in items]
        got = bootstrap.side_estimates([(s, stats.seeded_rng(1, s.label)) for s in items], 400, estimator)
        assert repr(got) == repr(want)
        assert not math.isnan(got[0].se) and math.isnan(got[3].se) and got[4].n == 0 and got[5].runs == 2


def _t_quantile_80_steps(p_two_sided, df):
    """stats.t_quantile as it was: 80 halvings, whether or not they still move."""
    if math.isinf(df) or df > 1e6:
        df = 1e6
    lo, hi = 0.0, 1.0
    while stats.t_two_sided_p(hi, df) > p_two_sided and hi < 1e6:
        hi *= 2.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if stats.t_two_sided_p(mid, df) > p_two_sided:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def test_t_quantile_by_newton_is_the_80_halvings_value():
    """Newton's steps inside a bracket land where 80 halvings do, to a few
    units in the last place (the p itself is good to about 1e-15)."""
    for p in (0.05, 0.4, 0.01, 0.5, 0.2, 1e-6, 0.999):
        for df in (0.5, 1.0, 1.5, 2.7, 4.0, 10.0, 33.3, 117.25, 1e3, 5e5, 1e7, math.inf):
            got, want = stats.t_quantile.__wrapped__(p, df), _t_quantile_80_steps(p, df)
            assert abs(got - want) <= 1e-13 * want, (p, df, got, want)
    assert math.isnan(stats.t_quantile.__wrapped__(math.nan, 4.0))
    assert math.isnan(stats.t_quantile.__wrapped__(0.05, 0.0))
    # textbook values: t(0.975, 1) = 12.706, t(0.975, 10) = 2.228, t(0.995, 30) = 2.750
    assert abs(stats.t_quantile(0.05, 1.0) - 12.7062) < 1e-4
    assert abs(stats.t_quantile(0.05, 10.0) - 2.22814) < 1e-5
    assert abs(stats.t_quantile(0.01, 30.0) - 2.74999) < 1e-5


def test_t_quantile_starts_near_its_answer(monkeypatch):
    """From the Cornish-Fisher guess, the levels a report asks for (.05,
    the power's .4, the median's .5) at the degrees of freedom it meets
    take 5-8 evaluations of the p, not the 11-12 of a search from 1."""
    from kbench.model import pvalues
    calls = []
    real = pvalues.t_two_sided_p
    monkeypatch.setattr(pvalues, "t_two_sided_p", lambda t, df: calls.append(t) or real(t, df))
    for p in (0.05, 0.4, 0.5):
        counts = []
        for df in np.linspace(4.2, 300.0, 60):
            calls.clear()
            pvalues.t_quantile.__wrapped__(p, float(df))
            counts.append(len(calls))
        assert np.mean(counts) <= 8 and max(counts) <= 20, (p, counts)     # from 1: 11-12, up to 46
    assert pvalues._t_guess(0.05, 10.0) == pytest.approx(2.22814, abs=1e-4)
    assert math.isnan(pvalues._t_guess(0.0, 10.0)) and math.isnan(pvalues._t_guess(1.0, 10.0))


def test_quartiles_are_numpys_percentiles():
    """boot_se's quartiles: np.percentile's numbers to the last bit."""
    rng = np.random.default_rng(7)
    arrays = [rng.normal(size=n) for n in (2, 3, 4, 5, 7, 8, 9, 10, 11, 17, 100, 1999, 2000, 2001)]
    arrays += [np.round(rng.normal(size=2000), 1), rng.lognormal(0, 3, 2000) * 1e-300, np.full(2000, -0.0),
               np.array([1.0, 1.0 + 2 ** -52]), np.array([-1e308, 1e308, 0.5]), rng.normal(size=2000) * 1e300]
    for b in arrays:
        q1, q3 = np.percentile(b, [25, 75])
        iqr = float(q3 - q1) / 1.349
        want = iqr if iqr > 0 else float(np.std(b, ddof=1))
        assert repr(stats.boot_se(b)) == repr(want)
        if bootstrap._NUMPY_LERP:   # what boot_se uses with this numpy
            assert repr(stats.quartiles(b)) == repr([float(q1), float(q3)]), (len(b), q1, q3)


def _runs_state(runs):
    return [(r.path, r.run_id, r.kernel, r.host, r.status, r.bad_lines, repr(r.invocations), repr(_state(r.cases)))
            for r in runs]


def test_runs_read_by_workers_are_the_runs_read_here(tmp_path, monkeypatch):
    """load_runs with worker processes: the same runs, in the same order,
    with the same warnings in the same order, as one by one in this
    process; a damaged run is skipped alike."""
    import shutil
    src = HERE.parent / "data" / "runs" / "testhost"
    for i, kdir in enumerate(sorted(src.iterdir()) * 3):
        run_dir = next(kdir.iterdir())
        dst = tmp_path / "h" / kdir.name / f"{run_dir.name}-{i}"
        shutil.copytree(run_dir, dst)
        samples = dst / "samples.jsonl"
        if i == 1:      # damaged lines: warnings from inside a worker
            samples.write_bytes(samples.read_bytes() + b"{not json\n[1]\n")
        if i == 4:      # unusable meta.json: the run is skipped with a reason
            (dst / "meta.json").write_text("[]")
    dirs = [tmp_path / "h"]
    monkeypatch.setenv("KBENCH_JOBS", "1")
    w_here = load.Warnings()
    here = load.load_runs(dirs, w_here)
    monkeypatch.setenv("KBENCH_JOBS", "3")
    monkeypatch.setattr(workers, "count", lambda n: 3)
    seen = []
    real_pool = __import__("multiprocessing").get_context("fork").Pool

    class CountingPool:
        def __init__(self, n, **kw):
            seen.append(n)
            self.pool = real_pool(n, **kw)

        def __enter__(self):
            return self.pool.__enter__()

        def __exit__(self, *exc):
            return self.pool.__exit__(*exc)

    class Ctx:
        Pool = CountingPool
    monkeypatch.setattr("multiprocessing.get_context", lambda how: Ctx)
    w_workers = load.Warnings()
    by_workers = load.load_runs(dirs, w_workers)
    assert seen == [3]                      # the workers did read them
    assert len(here) == 5 and len(by_workers) == 5
    assert _runs_state(by_workers) == _runs_state(here)
    assert w_workers.messages == w_here.messages
    assert any("invalid JSON" in m for m in w_here.messages)
    assert any("run skipped" in m for m in w_here.messages)
    # each run's estimates made by workers (a comparison of many runs): those made here, one by one
    from kbench.model import compare
    opts = compare.Options(n_boot=300)
    compare.estimate_runs(by_workers, opts)
    assert seen == [3, 3]
    key = (opts.estimator, opts.n_boot, opts.seed)
    for r, h in zip(by_workers, here):
        made = r.__dict__["_kbench_estimates"][key]
        assert "_kbench_cells" not in r.__dict__       # the cells' Series stay in the workers
        assert made == compare.run_estimates(h, opts) and len(made) > 10
        assert compare.run_estimates(r, opts) is made      # not made again
    compare.estimate_runs(by_workers, opts)                   # nothing left to make: no workers
    assert seen == [3, 3]
    # workers that fail leave each run's estimates to be made when asked for
    monkeypatch.setattr(workers, "count", lambda n: 3 if n else 1)
    fresh = load.load_runs(dirs, load.Warnings())
    monkeypatch.setattr("kbench.model.judge.run_estimates", lambda *a: 1 / 0)
    compare.estimate_runs(fresh, opts)
    assert seen[-1] == 3 and not any("_kbench_estimates" in r.__dict__ for r in fresh)
    assert workers._TASK == [None]      # nothing of the work kept in this process


def test_fork_map_is_the_map_here_or_none():
    """fork_map: the items' results in their order, the function and the
    items not pickled (a lambda over this process's objects); None with
    fewer than two workers, no items or a failing item, so that the
    caller does the work itself."""
    held = {"scale": 3}
    items = list(range(9))
    got = workers.fork_map(lambda i: (i * held["scale"], os.getpid()), items, 2)
    assert [v for v, _ in got] == [i * 3 for i in items]
    assert os.getpid() not in {pid for _, pid in got}
    assert workers.fork_map(lambda i: i, items, 1) is None
    assert workers.fork_map(lambda i: i, [], 2) is None
    assert workers.fork_map(lambda i: 1 / (i - 4), items, 2) is None
    assert workers._TASK == [None]


def test_fork_maps_workers_leave_ctrl_c_to_their_parent():
    """Ctrl-C reaches the whole process group: the forked workers ignore it
    (the parent stops the pool and says it was interrupted), so none of
    them prints a traceback of its own; the parent's own handler is
    untouched."""
    import signal
    before = signal.getsignal(signal.SIGINT)
    got = workers.fork_map(lambda i: signal.getsignal(signal.SIGINT) == signal.SIG_IGN, list(range(4)), 2)
    assert got == [True] * 4
    assert signal.getsignal(signal.SIGINT) == before


def test_workers_only_from_a_few_runs_and_as_capped(monkeypatch):
    monkeypatch.delenv("KBENCH_JOBS", raising=False)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert workers.count(workers.PARALLEL_FROM - 1) == 1
    assert workers.count(20) == 4
    assert workers.count(5) == 4
    monkeypatch.setenv("KBENCH_JOBS", "2")
    assert workers.count(20) == 2
    monkeypatch.setenv("KBENCH_JOBS", "1")
    assert workers.count(20) == 1
    monkeypatch.setenv("KBENCH_JOBS", "lots")      # not a number: ignored
    assert workers.count(20) == 4


def test_cv_percents_are_each_cv_percent():
    """A summary's within-rep spread: the reps of one length at once, the
    same numbers as one by one, those without one (fewer than two
    samples, a mean of zero) left out."""
    rng = np.random.default_rng(11)
    arrays = [rng.lognormal(5.0, rng.uniform(0.001, 1.0), int(rng.integers(0, 12))) * 10.0 ** int(rng.integers(-4, 5))
              for _ in range(3000)]
    arrays += [np.zeros(3), np.array([1.0]), np.array([]), np.array([2.0, 2.0])]
    def one(x):     # numpy's std over one array: what cv_percent computed before it took cv_percents
        mean = float(np.mean(x)) if len(x) >= 2 else 0.0
        return float(np.std(x, ddof=1) / abs(mean) * 100.0) if mean != 0 else math.nan
    want = [v for v in (one(a) for a in arrays) if not math.isnan(v)]
    got = stats.cv_percents(arrays)
    assert sorted(got) == sorted(want) and len(got) == len(want) and 0.0 in got
    assert len(want) < len(arrays) - 3
    for a in arrays[:200] + arrays[-4:]:      # and one array alone, as cv_percent takes it
        v, alone = one(a), stats.cv_percent(a)
        assert math.isnan(alone) if math.isnan(v) else alone == v
    assert math.isnan(stats.cv_percent([1.0])) and math.isnan(stats.cv_percent([0.0, 0.0]))


def test_a_summary_with_a_plan_draws_no_resample(monkeypatch):
    """With the run level's plan a case's mde is the plan's: its summary
    draws no bootstrap, and says what it said with one; without a plan the
    reps' bootstrap gives the mde."""
    g = np.random.default_rng(2)
    series = stats.Series.single([g.lognormal(5.0, 0.05, 3) for _ in range(24)], label="x",
                                 units=["r1"] * 12 + ["r2"] * 12)
    plan = (0.0004, 30.0)
    drawn = []
    real = bootstrap.boot_many
    monkeypatch.setattr(bootstrap, "boot_many", lambda ys, n_boot, *a: drawn.append(n_boot) or real(ys, n_boot, *a))
    with_plan = stats.summarize(series, plan=plan)
    assert drawn == [0]
    assert with_plan.mde == stats.planned_mde(stats.runmodel.Plan(*plan), 2) and with_plan.runs == 2
    without = stats.summarize(series)
    assert drawn == [0, stats.DEFAULT_BOOT] and not math.isnan(without.mde) and without.mde != with_plan.mde
    same = ("n_reps", "n_samples", "headline", "best", "rep_min", "rep_max", "between_cv", "within_cv", "median",
            "runs", "run_p")
    assert [getattr(with_plan, f) for f in same] == [getattr(without, f) for f in same]


def test_runs_for_by_halving_is_the_first_k_that_is_enough():
    """runs_for halves [1, cap]: the fewest runs a side whose planned mde
    reaches the target, as trying k = 1, 2, ... cap finds it, on plans of
    every kind (with and without the covariates' part, a session term, a
    fitted scale, the host's degrees of freedom); None where cap is not
    enough or there is no plan."""
    def one_by_one(parts, target, cap):
        for k in range(1, cap + 1):
            m = stats.planned_mde(parts, k)
            if not math.isnan(m) and m <= target:
                return k
        return None
    g = np.random.default_rng(3)
    seen = set()
    for _ in range(600):
        parts = (float(g.lognormal(np.log(4e-4), 1.5)), float(g.uniform(1.0, 40.0)),
                 float(g.choice([0.0, g.lognormal(np.log(1e-4), 1.0)])),
                 float(g.choice([0.0, 0.0, g.lognormal(np.log(1e-4), 1.5)])),
                 float(g.choice([math.inf, g.uniform(1.0, 20.0)])), float(g.uniform(0.0, 10.0)), float(g.uniform(0, 1)))
        for target, cap in ((0.03, 30), (0.01, 30), (0.05, 7), (0.03, 1)):
            got = stats.runs_for(parts, target, cap)
            assert got == one_by_one(parts, target, cap), (parts, target, cap)
            seen.add(got)
    assert None in seen and {1, 2, 3, 10} <= seen
    assert stats.runs_for((), 0.03) is None and stats.runs_for((math.nan, 5.0), 0.03) is None
