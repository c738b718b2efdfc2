"""The defaults of the analysis live in one place (model/defaults.py), and
the C++ planner's copies of them agree with it (issue 43 item 5).

kbench-run's budget rounds (src/driver/plan.cpp, options.hpp) stop when
every case could detect the minimum effect, with the power multiplier of
a test at the scripts' level and power.  The planner carries those as
numbers of its own; these tests read them from the C++ source, so that a
change of either side alone fails here."""
import argparse
import pathlib
import re

import pytest

from kbench import SUPPORTED_SCHEMA, cli
from kbench.model import compare, defaults, stats

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cpp_array(text, name):
    m = re.search(r"\b%s\[\]\s*=\s*\{([^}]*)\}" % re.escape(name), text)
    assert m, f"{name} not found"
    return [float(x) for x in m.group(1).split(",")]


def test_the_planners_min_effect_is_the_models():
    text = (ROOT / "src" / "driver" / "options.hpp").read_text()
    m = re.search(r"double\s+target_change\s*=\s*([0-9.]+)\s*;", text)
    assert m, "target_change not found in options.hpp"
    assert float(m.group(1)) == defaults.DEFAULT_MIN_EFFECT


def test_the_planners_power_multipliers_are_the_models():
    """plan.cpp's table of t(1 - ALPHA/2) + t(POWER) per degrees of freedom,
    to its two decimals, is what the model's detectable_change uses."""
    text = (ROOT / "src" / "driver" / "plan.cpp").read_text()
    dfs, muls = cpp_array(text, "kDf"), cpp_array(text, "kMul")
    assert len(dfs) == len(muls) >= 5
    for df, mul in zip(dfs, muls):
        want = stats.t_quantile(defaults.ALPHA, df) + stats.t_quantile(2.0 * (1.0 - defaults.POWER), df)
        assert abs(mul - want) < 0.0075, (df, mul, want)
    beyond = re.search(r"return\s+([0-9.]+)\s*;\s*\n\s*\}", text[text.index("power_multiplier"):])
    want = stats.t_quantile(defaults.ALPHA, 1e6) + stats.t_quantile(2.0 * (1.0 - defaults.POWER), 1e6)
    assert abs(float(beyond.group(1)) - want) < 0.0075


def test_the_check_fails_when_one_side_moves():
    """The comparison above is not vacuous: another level or power moves
    the multipliers far beyond its tolerance."""
    for alpha, power in ((0.10, defaults.POWER), (defaults.ALPHA, 0.90)):
        got = stats.t_quantile(alpha, 8) + stats.t_quantile(2.0 * (1.0 - power), 8)
        assert abs(got - 3.20) > 0.1


def test_level_and_alpha_agree():
    assert defaults.LEVEL == pytest.approx(1.0 - defaults.ALPHA)


def test_the_model_and_the_options_take_the_defaults_from_one_place():
    opts = compare.Options()
    assert (opts.min_effect, opts.n_boot, opts.seed, opts.level, opts.min_reps, opts.estimator,
            opts.families) == (
        defaults.DEFAULT_MIN_EFFECT, defaults.DEFAULT_BOOT, defaults.DEFAULT_SEED, defaults.LEVEL,
        defaults.DEFAULT_MIN_REPS, defaults.DEFAULT_ESTIMATOR, defaults.DEFAULT_FAMILIES)
    ap = argparse.ArgumentParser()
    cli._add_stats_options(ap)
    a = ap.parse_args([])
    assert (a.min_effect, a.boot, a.seed, a.min_reps, a.estimator, a.families) == (
        opts.min_effect, opts.n_boot, opts.seed, opts.min_reps, opts.estimator, opts.families)
    assert stats.DEFAULT_MIN_EFFECT is defaults.DEFAULT_MIN_EFFECT and stats.LEVEL is defaults.LEVEL
    assert SUPPORTED_SCHEMA == defaults.SUPPORTED_SCHEMA


def test_no_default_is_written_twice_in_the_package():
    """The numbers of defaults.py appear as assignments nowhere else in
    the package's source (a second `DEFAULT_BOOT = 2000` would drift)."""
    pkg = ROOT / "scripts" / "kbench"
    names = [n for n in vars(defaults) if n.isupper()]
    for path in pkg.rglob("*.py"):
        if path.name == "defaults.py":
            continue
        for n in names:
            assert not re.search(r"^\s*%s\s*=\s*[0-9\"'(]" % n, path.read_text(), re.M), (path, n)
