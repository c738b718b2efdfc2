"""kbench analysis scripts: load run directories, compute statistics,
compare kernels, draw charts and write the HTML report.

Modules:
  load     find and read run directories (tolerant of damaged files)
  stats    pure statistics (medians of rep medians, bootstrap, rank test)
  compare  case-by-case comparison of two sides (kernels)
  tables   the lmbench-style summary table definitions
  plot     charts (the only module that imports matplotlib)
  html     the self-contained HTML page
  cli      the command-line entry points (scripts/NAME calls main(NAME) here,
           which needs no numpy)
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
