"""bisect-step: one step of `git bisect run scripts/bisect-step ...` in a
kernel tree: build the commit under test (or take a ready image), boot it
in a guest (scripts/vm-run) or run the user's command for real hardware,
run the chosen cases, and say whether it is closer to the good or to the
bad reference run.

How "closer" is decided.  For each chosen case whose good and bad
references differ (compare's verdict between them: significant and at
least the minimum effect), the commit's ratio to the good reference comes
with compare's interval (reps, the run level with its prior).  The
midpoint of good and bad is their geometric mean, sqrt(good * bad): on a
log scale, where a change is a ratio, 10% slower and 10% faster are the
same distance, and times and MB/s behave alike.  A case says good when its
whole interval lies on the good side of the midpoint, bad when it lies on
the bad side, nothing when the interval holds the midpoint.  Why the
interval and not the point: one commit marked wrongly sends the whole
bisection into the wrong half, with nothing to show it; an undecided step
costs one more measurement (a retry with twice the reps, pooled with the
first run) and at worst a skip, after which git tests a neighbour.  The
step is good when the deciding cases all say good, bad when they all say
bad; none deciding, or cases disagreeing (two changes in the range), is
inconclusive.

Exit status, for git bisect run: 0 closer to good, 1 closer to bad, 125
inconclusive after the retry (git skips the commit), 128 a build or boot
failure or no run (git stops the bisection: the reason is on stderr and in
the log), 129 bad usage or references (also stops it).  git bisect run
takes 1-127 but 125 as bad and anything above 127 as a reason to stop.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from .model import compare, defaults, drift, load, stats

PROG = "bisect-step"
ROOT = Path(__file__).resolve().parent.parent.parent
GOOD, BAD, SKIP, ABORT, USAGE = 0, 1, 125, 128, 129


class Abort(Exception):
    """The step cannot measure this commit, for a reason that is not the
    commit's: the bisection must stop (exit 128)."""


class Usage(Exception):
    pass


def say(msg):
    print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def parse(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=(
        "One step of git bisect run in a kernel tree: build, boot (scripts/vm-run) or run a command, run the "
        "chosen cases, compare with the good and bad reference runs.  Exit 0 closer to good, 1 closer to bad, "
        "125 inconclusive after a retry (skip), 128 build or boot failure (stops the bisection)."))
    ap.add_argument("--record", choices=("good", "bad"),
                    help="measure this commit and keep its run as the good or bad reference (WORK/good, WORK/bad)")
    ap.add_argument("--good", metavar="DIR", help="the good reference: run or kernel directory (default WORK/good)")
    ap.add_argument("--bad", metavar="DIR", help="the bad reference (default WORK/bad)")
    ap.add_argument("--only", metavar="REGEX", required=True, help="the cases to run and judge (kbench-run --only)")
    ap.add_argument("--reps", type=int, default=10, metavar="N",
                    help="reps of each case (default 10; the retry runs twice as many)")
    ap.add_argument("--tree", default=".", metavar="DIR", help="the kernel tree (default: the current directory)")
    ap.add_argument("--build", metavar="CMD",
                    help="the build command, run in the tree by the shell (default: make olddefconfig, then make "
                         "-jN bzImage, with the tree's .config)")
    ap.add_argument("--image", default="arch/x86/boot/bzImage", metavar="PATH",
                    help="the image the build leaves, relative to the tree (default arch/x86/boot/bzImage)")
    ap.add_argument("--kernel", metavar="IMAGE", help="a ready kernel image: nothing is built")
    ap.add_argument("--run", metavar="CMD", dest="run_cmd",
                    help="real hardware: instead of a guest, this shell command installs and boots the kernel "
                         "and runs the suite; it gets KBENCH_BISECT_IMAGE (the image), KBENCH_BISECT_ARGS (the "
                         "kbench-run options) and KBENCH_BISECT_OUT (a results root: the run must land under it)")
    ap.add_argument("--vm-args", default="", metavar="ARGS",
                    help="more options of scripts/vm-run, e.g. '--cpus 2 --mem 4G --accel kvm'")
    ap.add_argument("--on-build-failure", choices=("abort", "skip"), default="abort",
                    help="a build that fails: stop the bisection (default, exit 128) or skip the commit (125)")
    ap.add_argument("--work", default=str(ROOT / "results" / "bisect"), metavar="DIR",
                    help="where the references, each step's runs and the log go (default results/bisect)")
    ap.add_argument("--log", metavar="FILE", help="the step log, JSON Lines (default WORK/bisect-log.jsonl; "
                    "scripts/report --bisect shows it)")
    ap.add_argument("--min-effect", type=float, default=defaults.DEFAULT_MIN_EFFECT * 100, metavar="PCT",
                    help=f"the smallest difference of the references that counts (default {defaults.DEFAULT_MIN_EFFECT * 100:g})")
    ap.add_argument("--no-prior", action="store_true", help="no drift prior (as compare --no-prior)")
    ap.add_argument("--as-measured", action="store_true",
                    help="every case as measured, not relative to the control cases, and no guard on their moves "
                         "(as compare's): when the kernels themselves move the controls")
    a = ap.parse_args(argv)
    if a.reps < 3:
        raise Usage("--reps must be 3 or more (a comparison needs 3 reps a side)")
    if a.kernel and a.build:
        raise Usage("--kernel and --build exclude each other")
    if a.kernel and not Path(a.kernel).is_file():
        raise Usage(f"--kernel {a.kernel}: no such file")
    if not Path(a.tree).is_dir():
        raise Usage(f"--tree {a.tree}: no such directory")
    import re
    try:
        re.compile(a.only)
    except re.error as e:
        raise Usage(f"--only {a.only!r}: not a valid regular expression: {e}") from None
    a.work = Path(a.work).resolve()
    a.log = Path(a.log) if a.log else a.work / "bisect-log.jsonl"
    a.good = Path(a.good) if a.good else a.work / "good"
    a.bad = Path(a.bad) if a.bad else a.work / "bad"
    return a


def git(tree, *args):
    r = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def tail(text, n=15):
    return "\n".join((text or "").rstrip().splitlines()[-n:])


def build(a, commit):
    """The image of this commit: --kernel, else the build's."""
    if a.kernel:
        return Path(a.kernel).resolve()
    cmd = a.build or f"make olddefconfig && make -j{os.cpu_count() or 1} bzImage"
    if not a.build and not (Path(a.tree) / ".config").is_file():
        raise Usage(f"{a.tree}: no .config (copy your config there, or give --build CMD or --kernel IMAGE)")
    say(f"building {commit[:12] or 'the tree'}: {cmd}")
    t0 = time.monotonic()
    r = subprocess.run(["/bin/sh", "-c", cmd], cwd=a.tree, capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildFailed(f"the build failed (exit {r.returncode}: {cmd}):\n{tail(r.stdout + r.stderr)}")
    image = Path(a.tree) / a.image
    if not image.is_file():
        raise BuildFailed(f"the build ended but left no {a.image}")
    say(f"built in {time.monotonic() - t0:.0f} s: {image}")
    return image.resolve()


class BuildFailed(Abort):
    pass


def measure(a, image, reps, dest):
    """Run the chosen cases on this image; the run directory."""
    dest.mkdir(parents=True, exist_ok=True)
    run_args = ["--only", a.only, "--reps", str(reps)]
    before = set(map(str, load.find_run_dirs([dest], load.Warnings()))) if any(dest.iterdir()) else set()
    if a.run_cmd:
        env = dict(os.environ, KBENCH_BISECT_IMAGE=str(image), KBENCH_BISECT_ARGS=shlex.join(run_args),
                   KBENCH_BISECT_OUT=str(dest))
        say(f"running: {a.run_cmd}")
        r = subprocess.run(["/bin/sh", "-c", a.run_cmd], cwd=a.tree, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise Abort(f"--run failed (exit {r.returncode}): {tail(r.stderr or r.stdout, 5)}")
    else:
        cmd = [sys.executable, str(ROOT / "scripts" / "vm-run"), "--out", str(dest), "--no-summary",
               *shlex.split(a.vm_args), str(image), "--", *run_args]
        say(f"booting {image} in a guest (scripts/vm-run)")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1):      # 1: a case failed in the guest, the run is there
            raise Abort(f"the kernel did not give a run (scripts/vm-run exit {r.returncode}): "
                        f"{tail(r.stderr, 8)}")
    new = [d for d in load.find_run_dirs([dest], load.Warnings()) if str(d) not in before]
    if not new:
        raise Abort(f"no new run directory under {dest} after the run")
    return max(new, key=lambda d: d.stat().st_mtime)


def side(label, dirs):
    w = load.Warnings()
    runs = load.load_runs(dirs, w)
    if not runs:
        return None
    return compare.Side(label, runs)


def options(a):
    return compare.Options(min_effect=a.min_effect / 100.0, prior=None if a.no_prior else drift.load_prior(None),
                           relative=not a.as_measured)


def only(s, regex):
    import re
    pat = re.compile(regex)
    s.cases = {k: v for k, v in s.cases.items() if v.control or pat.search(k)}
    return s


def references(a, opts):
    good, bad = (side(n, [d]) if d.exists() else None for n, d in (("good", a.good), ("bad", a.bad)))
    for name, s, d in (("good", good, a.good), ("bad", bad, a.bad)):
        if s is None:
            raise Usage(f"no {name} reference run in {d} (record one: bisect-step --record {name} at a {name} "
                        f"commit, or give --{name} DIR)")
    only(good, a.only)
    only(bad, a.only)
    opts.run_noise = compare.measure_run_noise([good.runs, bad.runs], opts)
    shift = compare.compare_controls(good, bad, opts)
    rows = compare.compare_sides(good, bad, opts, shift=shift)
    differ = {r.case: r.cmp for r in rows if r.cmp.significant}
    if not differ and shift is not None and (shift.shifted or shift.memory_shifted):
        # compare's rule: with the controls moved, no case is called faster or slower
        why = shift.reason("memory" if shift.memory_shifted and not shift.shifted else "cpu")
        raise Usage(f"the control cases moved between the good and bad references, bad against good: {why}. "
                    f"The cases are not judged between them. Record them again on a quiet machine, "
                    f"or, when the kernels themselves move the controls (a PREEMPT_RT kernel, an emulated guest), "
                    f"give --as-measured")
    if not differ:
        raise Usage(f"the good and bad references do not differ in the cases of --only {a.only!r} (none is "
                    f"significantly faster or slower between them): nothing to bisect on")
    return good, bad, differ


def judge(a, opts, good, bad, differ, current):
    """(verdict 'good'/'bad'/'unclear', per-case dicts)."""
    only(current, a.only)
    opts.run_noise = compare.measure_run_noise([good.runs, bad.runs, current.runs], opts)
    rows = {r.case: r.cmp for r in compare.compare_sides(good, current, opts)}
    cases = []
    for name, ref in sorted(differ.items(), key=lambda kv: -abs(math.log(kv[1].ratio))):
        c = rows.get(name)
        mid = math.sqrt(ref.ratio)          # the geometric midpoint, as a ratio to good
        say_ = "unclear"
        if c is not None and c.comparable and not (math.isnan(c.lo) or math.isnan(c.hi)):
            up = ref.ratio > 1.0                # bad's ratio to good above 1
            if (c.hi < mid) if up else (c.lo > mid):
                say_ = "good"
            elif (c.lo > mid) if up else (c.hi < mid):
                say_ = "bad"
        cases.append({"case": name, "bad_ratio": ref.ratio, "midpoint": mid,
                      "ratio": None if c is None or math.isnan(c.ratio) else c.ratio,
                      "ci_low": None if c is None or math.isnan(c.lo) else c.lo,
                      "ci_high": None if c is None or math.isnan(c.hi) else c.hi, "says": say_})
    said = {x["says"] for x in cases} - {"unclear"}
    return (said.pop() if len(said) == 1 else "unclear"), cases


def log_step(a, entry):
    a.log.parent.mkdir(parents=True, exist_ok=True)
    with open(a.log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def kernel_of(run_dir):
    try:
        return json.loads((Path(run_dir) / "meta.json").read_text()).get("kernel_release", "")
    except (OSError, ValueError):
        return ""


def step(a):
    commit = git(a.tree, "rev-parse", "HEAD")
    subject = git(a.tree, "log", "-1", "--format=%s")
    entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit, "subject": subject,
             "kernel": "", "verdict": "", "exit": None, "ratio": None, "ci_low": None, "ci_high": None,
             "reps": None, "note": ""}
    opts = options(a)
    try:
        if a.record:
            image = build(a, commit)
            dest = a.good if a.record == "good" else a.bad
            run = measure(a, image, a.reps, dest)
            entry.update(kernel=kernel_of(run), verdict=f"record {a.record}", exit=0, reps=a.reps,
                         note=f"reference run {run}")
            log_step(a, entry)
            say(f"{a.record} reference: {run}")
            print(run)
            return 0
        good, bad, differ = references(a, opts)
        image = build(a, commit)
        dest = a.work / "steps" / (commit[:12] or time.strftime("%Y%m%dT%H%M%S"))
        runs = [measure(a, image, a.reps, dest)]
        verdict, cases = judge(a, opts, good, bad, differ, side("this commit", runs))
        reps = a.reps
        if verdict == "unclear":
            reps = 2 * a.reps
            say(f"inconclusive with {a.reps} reps: again with {reps}, pooled with the first run")
            runs.append(measure(a, image, reps, dest))
            verdict, cases = judge(a, opts, good, bad, differ, side("this commit", runs))
            reps += a.reps
    except BuildFailed as e:
        skip = a.on_build_failure == "skip"
        entry.update(verdict="skip" if skip else "abort", exit=SKIP if skip else ABORT, note=str(e).splitlines()[0])
        log_step(a, entry)
        say(f"{e}\n{PROG}: {'skipping this commit (--on-build-failure skip)' if skip else 'stopping the bisection: exit 128 (--on-build-failure skip would skip the commit instead)'}")
        return entry["exit"]
    except Abort as e:
        entry.update(verdict="abort", exit=ABORT, note=str(e).splitlines()[0])
        log_step(a, entry)
        say(f"{e}\n{PROG}: stopping the bisection (exit 128): this is no verdict on the commit")
        return ABORT
    lead = cases[0]
    code = {"good": GOOD, "bad": BAD}.get(verdict, SKIP)
    word = {"good": "good", "bad": "bad"}.get(verdict, "skip")
    entry.update(kernel=kernel_of(runs[0]), verdict=word, exit=code, ratio=lead["ratio"], ci_low=lead["ci_low"],
                 ci_high=lead["ci_high"], reps=reps, cases=cases,
                 note=f"{lead['case']}: bad/good {lead['bad_ratio']:.3f}, midpoint {lead['midpoint']:.3f}")
    log_step(a, entry)
    for c in cases:
        ci = "-" if c["ci_low"] is None else f"{c['ci_low']:.3f}..{c['ci_high']:.3f}"
        ratio = "-" if c["ratio"] is None else f"{c['ratio']:.3f}"
        say(f"  {c['case']}: {ratio} of good ({ci}); bad is {c['bad_ratio']:.3f}, midpoint {c['midpoint']:.3f}: "
            f"{c['says']}")
    say(f"{commit[:12]} {subject!r}: " + {"good": "closer to good (exit 0)", "bad": "closer to bad (exit 1)"}.get(
        verdict, f"inconclusive with {reps} reps (exit 125: git skips it)"))
    return code


def main(argv):
    try:
        a = parse(argv)
    except SystemExit as e:
        return USAGE if e.code else 0
    except Usage as e:
        say(str(e))
        return USAGE
    try:
        return step(a)
    except Usage as e:
        say(str(e))
        return USAGE
    except load.InputError as e:
        say(str(e))
        return USAGE
    except KeyboardInterrupt:
        say("interrupted")
        return 130
    except Exception as e:  # noqa: BLE001 -- never an exit status git would read as a verdict
        if os.environ.get("KBENCH_DEBUG"):
            import traceback
            traceback.print_exc()
        say(f"internal error: {type(e).__name__}: {e} (set KBENCH_DEBUG=1 for details; please report it): "
            f"stopping the bisection (exit 128)")
        return ABORT
