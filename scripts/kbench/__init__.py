"""kbench analysis scripts: load run directories, compute statistics,
compare kernels, draw charts and write the HTML report.

Modules:
  load     find and read run directories (tolerant of damaged files)
  stats    pure statistics (medians of rep medians, bootstrap, rank test)
  compare  case-by-case comparison of two sides (kernels)
  tables   the lmbench-style summary table definitions
  plot     charts (the only module that imports matplotlib)
  html     the self-contained HTML page
  cli      the command-line entry points
"""

SUPPORTED_SCHEMA = 1
