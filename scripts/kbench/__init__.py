"""kbench analysis scripts: load run directories, compute statistics,
compare kernels, draw charts and write the HTML report.

Two layers and a command line on top; an arrow only points down
(tests/scripts/test_kb_layers.py):

  model/    what the runs say: plain data in, plain data out (no printing,
            no units, no HTML)
    defaults   every default (level, minimum effect, bootstrap, ...), once
    load       find and read run directories (tolerant of damaged files)
    runs       Case, Run, Group; meta.json merged and compared
    groups     runs into kernels: identities, conditions, pooling
    decl, legacy   the benchmarks' declarations (and the older runs')
    stats      series, estimates, the run level, verdicts (with pvalues:
               distributions and tests; bootstrap: the estimators)
    drift      the built-in drift prior (drift_prior.json); prior: making one
    history    the runs that measure a host's drift between runs
    compare    case-by-case comparison of two sides (kernels)
    tables     the lmbench-style summary tables' cells
    series, scaling, explain, summary, controls, counters
  views/    how the model is shown
    text, units, machine   tables of text, numbers with units, the machine
    compare_text, summary_text, series_text, scaling_text, explain_text
    export     compare's CSV and JSON
    page, html, trends, strips   the self-contained HTML page
    plot       charts (the only module that imports matplotlib, lazily)
  cli       the command-line entry points (scripts/NAME calls main(NAME)
            here, which needs no numpy); bisect: scripts/bisect-step
  deps      what the scripts need beyond the standard library
"""

import sys

from .deps import DEPENDENCIES, INSTALL, missing_dependency  # noqa: F401  (handed on; no numpy)
from .model.defaults import SUPPORTED_SCHEMA  # noqa: F401  (handed on; imports no numpy)


def main(prog):
    """scripts/PROG: kbench.cli's PROG_main, which runs under cli._guard.
    Importing kbench.cli imports numpy before any guard can run: without
    numpy, the same one line (exit 1) instead of a traceback."""
    try:
        from . import cli
    except ImportError as e:
        msg = missing_dependency(prog, e)
        if msg is None:
            raise
        print(msg, file=sys.stderr)
        return 1
    return getattr(cli, prog + "_main")(sys.argv[1:])
