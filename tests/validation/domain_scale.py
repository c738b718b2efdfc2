#!/usr/bin/python3
"""How far each group of cases drifts against the built-in prior, per pair
of A/A runs (tests/validation/README.md, "File-system history and the cache
control"): the host's drift factor (drift._fit_scale, the maximum-likelihood
fit without the upper bound) fitted on each pair, for the CPU-bound cases
without lat_fs, lat_fs alone, and the memory-bound ones, and how far the
memory controls moved between the two runs.

    tests/validation/domain_scale.py RUN RUN [RUN...]

RUN: run directories of one kernel (gunzipped). Exit 2 on bad input."""
import itertools
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from kbench.model import compare, drift, load, stats  # noqa: E402

GROUPS = ("cpu", "fs", "memory")


def main(argv):
    if len(argv) < 2 or any(a.startswith("-") for a in argv):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    warn = load.Warnings(lambda m: print(f"warning: {m}", file=sys.stderr))
    runs = sorted(load.load_runs([Path(a) for a in argv], warn), key=lambda r: r.run_id)
    if len(runs) < 2:
        print("domain_scale.py: fewer than two usable runs", file=sys.stderr)
        return 2
    prior = drift.load_prior()
    opts = compare.Options(prior=prior)
    est = [compare.run_estimates(r, opts) for r in runs]
    doms = {n: compare.domain_of(c) for r in runs for n, c in r.cases.items()}
    print("pair             " + "  ".join(f"{g:>12s}" for g in GROUPS) + "  memory controls (other/base time)")
    for i, j in itertools.combinations(range(len(runs)), 2):
        by = {}
        for k, v in stats.run_spreads([[est[i], est[j]]]).items():
            if not k.startswith("cell:") and not k.startswith("ctl_machine"):
                by.setdefault(doms.get(k, "cpu"), {})[k] = v
        cells = []
        for g in GROUPS:
            pts = drift.scale_points(by.get(g, {}), prior)
            cells.append(f"{math.sqrt(drift._fit_scale(pts)):6.2f} ({len(pts):3d})" if len(pts) >= 5 else f"{'-':>12s}")
        ctl = []
        for name in ("ctl_machine mem", "ctl_machine llc"):
            a, b = est[i].get(name), est[j].get(name)
            if a and b:
                ratio = math.exp(b[0] - a[0])
                ctl.append(f"{name.split()[1]} {ratio if runs[i].cases[name].metric != 'bandwidth' else 1 / ratio:.2f}")
        print(f"{runs[i].run_id[-6:]} {runs[j].run_id[-6:]}  " + "  ".join(cells) + "  " + ", ".join(ctl))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
