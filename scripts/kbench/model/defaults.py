"""The defaults of the analysis, each defined here and nowhere else.

The model's functions, the command-line options and their help text all
take their defaults from these names.  The C++ planner (kbench-run's
budget rounds, src/driver/plan.cpp and options.hpp) carries its own copy of
MIN_EFFECT, ALPHA and POWER: tests/scripts/test_kb_defaults.py compares
them.  This module imports nothing, so that the package's __init__ can
hand SUPPORTED_SCHEMA on without numpy.
"""

SUPPORTED_SCHEMA = 1          # the newest meta.json/samples.jsonl schema the scripts read

LEVEL = 0.95                  # the confidence of every interval
ALPHA = 0.05                  # the significance level (1 - LEVEL)
DEFAULT_BOOT = 2000           # bootstrap resamples
DEFAULT_SEED = 1              # the bootstrap's seed: results are reproducible
DEFAULT_MIN_EFFECT = 0.03     # the smallest change called faster or slower
DEFAULT_MIN_REPS = 3          # fewer reps on a side: "too few reps"
ESTIMATORS = ("low", "median")
DEFAULT_ESTIMATOR = "low"
LOW_Q = 0.2                   # the quantile of the reps' times that `low` estimates
POWER = 0.80                  # for the minimum detectable effect
PLAN_MAX_RUNS = 30            # the most runs a side a plan of more runs considers
PLAN_RUNS = (1, 2, 4, 8)      # the runs a side the plan of more runs shows
FAMILIES = ("tables", "two", "one")
DEFAULT_FAMILIES = "tables"   # the adjustment's families (compare --families)
FEW_REPS = 8                  # fewer reps than this in a side's one run: the few-reps note
ENOUGH_REPS = 10              # what the few-reps note suggests
DRIFT_INFLATE = 1.0           # how much a made drift prior widens the measured variance
