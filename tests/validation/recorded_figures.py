#!/usr/bin/python3
"""recorded_figures.py — the figures the documentation quotes that the
repository's own data can show, checked (make validate).

    tests/validation/recorded_figures.py [--check]

On the real run recorded in tests/data/recorded (a 2-vCPU Intel VM,
November 2026, 274 cases x 5 reps): how much a rep's samples vary and how
much the reps' medians vary; from the built-in drift prior
(scripts/kbench/model/drift_prior.json): the figures of its cases' drift. Every other validation script needs runs that
are not in the repository (tests/validation/README.md gives each figure
with its script, and says they were measured once); these three run here on the recorded run
so that nothing notices only later that they broke: process_creation.py,
control_correction.py with the run against itself (every ratio 1), and
newcomer_pairs.py on a campaign whose A/A and quick A/A runs are that run (a clean pair each).

With --check each figure is held to the bounds of the sentence that quotes
it, and that sentence must still be in its file word for word (change one,
change the other). Exit status: 0 all held, 1 one did not (each said), 2
usage error.
"""
import argparse
import json
import statistics
import subprocess
import tempfile
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from kbench.model import load  # noqa: E402

RECORDED = ROOT / "tests" / "data" / "recorded"
HERE = Path(__file__).resolve().parent

# (name, file, the sentence's words, low, high): the figure must lie in [low, high]
CLAIMS = [
    ("within-rep CV, lower quartile (%)", "src/reference/statistics.md", "within-rep samples vary by about 3-9%", 2.0, 4.0),
    ("within-rep CV, upper quartile (%)", "src/reference/statistics.md", "within-rep samples vary by about 3-9%", 7.0, 10.0),
    ("rep medians' CV, 10th percentile (%)", "src/reference/statistics.md", "rep medians by 5-30%", 4.0, 6.0),
    ("rep medians' CV, 90th percentile (%)", "src/reference/statistics.md", "rep medians by 5-30%", 26.0, 34.0),
    # the built-in drift prior (scripts/kbench/model/drift_prior.json): its figures to the digits quoted
    ("prior: cases", "src/reference/statistics.md", "τ over the 321 cases", 321, 321),
    ("prior: median τ (%)", "src/reference/statistics.md", "median 4.6%, 90th percentile 11.4%", 4.55, 4.65),
    ("prior: 90th percentile of τ (%)", "src/reference/statistics.md", "median 4.6%, 90th percentile 11.4%", 11.35, 11.45),
    ("prior: lat_syscall null τ (%)", "src/reference/statistics.md", "`lat_syscall null` 2.6%", 2.55, 2.65),
    ("prior: lat_syscall stat τ (%)", "src/reference/statistics.md", "`lat_syscall stat` 2.9%", 2.85, 2.95),
    ("prior: lat_pathwalk negative depth=1,name_len=8 τ (%)", "tests/validation/README.md",
     "`lat_pathwalk negative depth=1,name_len=8` 2.3% to 9.9%", 9.85, 9.95),
    ("prior: bw_file_rd io_only size_kb=512 τ (%)", "tests/validation/README.md",
     "`bw_file_rd io_only size_kb=512` 2.8% to 7.5%", 7.45, 7.55),
    ("prior: lat_fs create dir=default,mode=fresh,size_kb=1 τ (%)", "tests/validation/README.md",
     "`lat_fs create mode=fresh` 1% to 22-29%", 22.0, 29.5),
    ("prior: lat_fs create dir=default,mode=fresh,size_kb=10 τ (%)", "tests/validation/README.md",
     "`lat_fs create mode=fresh` 1% to 22-29%", 22.0, 29.5),
    ("prior: runs", "src/reference/statistics.md", "was made from fifteen A/A runs", 15, 15),
    ("prior: boots", "src/reference/statistics.md", "fifteen A/A runs (the same kernel, default `make run`s at different moments, "
     "on three boots)", 3, 3),
    ("prior: lat_proc fork τ (%)", "src/reference/statistics.md", "`lat_proc fork` 8.1%", 8.05, 8.15),
    ("prior: lat_proc exec τ (%)", "src/reference/statistics.md", "`exec` 9.2%", 9.15, 9.25),
    ("prior: lat_proc fork τ (%)", "src/reference/benchmarks.md", "fork's drift between runs is 8.1%, exec's 9.2%", 8.05, 8.15),
    ("prior: lat_proc exec τ (%)", "src/reference/benchmarks.md", "fork's drift between runs is 8.1%, exec's 9.2%", 9.15, 9.25),
    ("prior: bw_mem rd size_kb=262144 τ (%)", "src/reference/statistics.md", "`bw_mem rd size_kb=262144` 5.0%", 4.95, 5.05),
    ("prior: bw_mem bzero size_kb=4096 τ (%)", "src/reference/statistics.md", "`bw_mem bzero size_kb=4096` 17%", 16.5, 17.5),
    ("prior: lat_mem_rd random size_kb=262144 τ (%)", "src/reference/statistics.md",
     "`lat_mem_rd random size_kb=262144` 103%", 102.5, 103.5),
    ("prior: the memory control's τ (%)", "src/reference/statistics.md", "the memory control 13%", 12.5, 13.5),
    ("prior: the CPU controls' largest τ (%)", "src/reference/statistics.md", "the CPU controls about 2%", 1.5, 2.5),
    ("prior: the CPU controls' smallest τ (%)", "src/reference/statistics.md", "the CPU controls about 2%", 1.5, 2.5),
]
PRIOR = ROOT / "scripts" / "kbench" / "model" / "drift_prior.json"


def prior_figures():
    prior = json.loads(PRIOR.read_text())
    cases = prior["cases"]
    tau = {k: v["tau"] * 100 for k, v in cases.items()}
    cpu = [tau[f"ctl_machine {v}"] for v in ("chain", "alu", "copy")]
    out = {"prior: cases": len(tau), "prior: median τ (%)": statistics.median(tau.values()),
           "prior: 90th percentile of τ (%)": sorted(tau.values())[int(0.9 * (len(tau) - 1))],
           "prior: the memory control's τ (%)": tau["ctl_machine mem"],
           "prior: the CPU controls' largest τ (%)": max(cpu), "prior: the CPU controls' smallest τ (%)": min(cpu)}
    out["prior: runs"], out["prior: boots"] = prior["source"]["runs"], prior["source"]["boots"]
    for case in ("lat_syscall null", "lat_syscall stat", "lat_proc fork", "lat_proc exec", "bw_mem rd size_kb=262144",
                 "bw_mem bzero size_kb=4096", "lat_mem_rd random size_kb=262144",
                 "lat_pathwalk negative depth=1,name_len=8", "bw_file_rd io_only size_kb=512",
                 "lat_fs create dir=default,mode=fresh,size_kb=1", "lat_fs create dir=default,mode=fresh,size_kb=10"):
        out[f"prior: {case} τ (%)"] = tau[case]
    return out


def quantile(values, q):
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def figures(run_dir):
    runs = load.load_runs([run_dir], load.Warnings())
    if len(runs) != 1:
        raise SystemExit(f"recorded_figures.py: {run_dir}: expected one run, found {len(runs)}")
    within, between = [], []
    for case in runs[0].cases.values():
        if case.control:
            continue
        reps = [v for v in case.reps.values() if len(v) > 1]
        within += [statistics.stdev(v) / statistics.mean(v) * 100 for v in reps]
        medians = [statistics.median(v) for v in reps]
        if len(medians) > 2:
            between.append(statistics.stdev(medians) / statistics.mean(medians) * 100)
    return {
        "within-rep CV, lower quartile (%)": quantile(within, 0.25),
        "within-rep CV, upper quartile (%)": quantile(within, 0.75),
        "rep medians' CV, 10th percentile (%)": quantile(between, 0.10),
        "rep medians' CV, 90th percentile (%)": quantile(between, 0.90),
    }


def scripts_still_run(run_dir):
    """The validation scripts that can run on one recorded run: [(what, problem)]."""
    bad = []
    for args, want in (([HERE / "process_creation.py", run_dir], "lat_proc fork"),
                       # the run against itself: every case's ratio exactly 1, raw and corrected
                       ([HERE / "control_correction.py", run_dir, run_dir], "raw: |time ratio - 1| median 0.0%")):
        p = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True, timeout=300)
        if p.returncode != 0 or want not in p.stdout:
            bad.append((args[0].name, f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"))
    # newcomer_pairs.py on a campaign whose A/A runs and quick A/A runs are the recorded run itself:
    # one pair in each section, clean
    with tempfile.TemporaryDirectory(prefix="kbench-validate-") as tmp:
        for label in ("aa1", "aa2", "qaa1", "qaa2"):
            Path(tmp, f"{label}.dir").write_text(f"{run_dir}\n")
        p = subprocess.run([sys.executable, str(HERE / "newcomer_pairs.py"), tmp], capture_output=True, text=True,
                           timeout=300)
        if p.returncode != 0 or p.stdout.count("1 of 1 pass") != 2 or "== --quick A/A" not in p.stdout:
            bad.append(("newcomer_pairs.py", f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"))
    return bad


def main(argv):
    ap = argparse.ArgumentParser(prog="recorded_figures.py", description="The documentation's figures that the "
                                 "recorded run in tests/data can show; --check holds them to their bounds.")
    ap.add_argument("--check", action="store_true", help="check every figure against its quoted sentence")
    args = ap.parse_args(argv)
    run_dirs = sorted(p.parent for p in RECORDED.rglob("meta.json"))
    if len(run_dirs) != 1:
        print(f"recorded_figures.py: expected one recorded run under {RECORDED}, found {len(run_dirs)}",
              file=sys.stderr)
        return 1
    got = {**figures(run_dirs[0]), **prior_figures()}
    failures = []
    for name, file, words, lo, hi in CLAIMS:
        v = got[name]
        print(f"{name:<46} {v:7.2f}   [{lo:g}, {hi:g}]   {file}: \"{words}\"")
        if not args.check:
            continue
        text = " ".join((ROOT / file).read_text().split())
        if words not in text:
            failures.append(f"{file} no longer says \"{words}\": update CLAIMS here with the sentence")
        if not lo <= v <= hi:
            failures.append(f"{name} is {v:.2f}, outside [{lo:g}, {hi:g}] that \"{words}\" ({file}) stands for")
    if args.check:
        for script, problem in scripts_still_run(run_dirs[0]):
            failures.append(f"{script} on the recorded run: {problem}")
        for f in failures:
            print(f"FAILED: {f}", file=sys.stderr)
        print(f"{len(CLAIMS) - sum(1 for f in failures if 'outside' in f)} of {len(CLAIMS)} figures within their "
              f"bounds; the validation scripts that can run here: "
              f"{'ran' if not any('recorded run:' in f for f in failures) else 'FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
