"""kbench-run --scaling[=REGEX]: the base cases at 1, 2, 4, ... and all CPUs
(binaries' --copies), as cases of their own: listed, run in the same shuffled
reps, recorded in cases.jsonl with their declaration, resumable."""
import json
import os

from bench_runner import check_sample_invariants
from driver_runner import run_dir_of, run_driver, run_lines

CPUS = len(os.sched_getaffinity(0))


def counts():
    out, n = [], 1
    while n < CPUS:
        out.append(n)
        n *= 2
    return out + [CPUS]


def lines(path):
    """PATH's JSON objects; a run's samples and runs are read compressed once it has ended."""
    return run_lines(path.parent, path.name)


def test_scaling_list_names_the_default_set(driver, bin_dir):
    r = run_driver(driver, "--scaling", "--list", "--no-controls", "--only", " x[0-9]+$", bin_dir=bin_dir)
    assert r.returncode == 0, r.stderr
    names = set(r.stdout.splitlines()[:-1])
    bases = ["lat_syscall null", "lat_pagefault anon", "lat_pagefault anon threads", "lat_proc fork",
             "lat_pipe rt @same", "lat_udp rt family=ipv4,size=1 @same", "lat_udp rt family=ipv4,size=1 @cross",
             "lat_fs create dir=default,mode=fresh,size_kb=0", "lat_fs create dir=default,mode=fresh,size_kb=0 threads",
             "ctl_machine alu"]
    assert names == {f"{b} x{n}" for b in bases for n in counts()}
    # without --scaling there is none
    r = run_driver(driver, "--list", bin_dir=bin_dir)
    assert r.returncode == 0 and not [l for l in r.stdout.splitlines() if " x1" in l or "--copies" in l]


def test_scaling_run_and_resume(driver, bin_dir, tmp_path):
    out = tmp_path / "out"
    r = run_driver(driver, "--scaling=^lat_syscall null$", "--only", " x[0-9]+$", "--no-controls", "--quick",
                   "--reps", "2", "--seed", "5", "--out", out, "--no-table", bin_dir=bin_dir, timeout=300)
    assert r.returncode == 0, r.stderr
    run = run_dir_of(r)
    names = {f"lat_syscall null x{n}": n for n in counts()}
    runs = lines(run / "runs.jsonl")
    assert sorted((x["case"], x["rep_idx"]) for x in runs) == sorted((c, k) for c in names for k in (0, 1))
    for x in runs:
        n = names[x["case"]]
        assert x["status"] == "ok", x
        assert x["args"][:3] == ["null", "--copies", str(n)] and "--cpu" not in x["args"]
        assert x["n_samples"] == 3 * n
    samples = lines(run / "samples.jsonl")
    for s in samples:
        assert s["copies"] == names[s["case"]] and s["copy_mode"] == "processes"
        check_sample_invariants(s, f'{s["case"]} rep {s["rep_idx"]} copy {s["copy_idx"]}')
    for case, n in names.items():
        for rep in (0, 1):
            mine = [s for s in samples if s["case"] == case and s["rep_idx"] == rep]
            assert sorted((s["sample_idx"], s["copy_idx"]) for s in mine) == [(i, c) for i in range(3) for c in range(n)]
    decl = {d["case"]: d for d in lines(run / "cases.jsonl")}
    for case, n in names.items():
        d = decl[case]
        assert (d["copies"], d["copy_mode"], d["scaling_of"], d["summary"], d["curve"]) == \
            (n, "processes", "lat_syscall null", None, None)
        assert d["category"] == "Scaling (per copy)"
        assert (d["control"], d["scaling_control"]) == (False, False)
    meta = json.loads((run / "meta.json").read_text())
    assert meta["options"]["scaling"] == "^lat_syscall null$"

    # An interrupted invocation of the largest count: --resume runs it again,
    # with the same arguments, and nothing else.
    last = f"lat_syscall null x{CPUS}"
    kept = [x for x in runs if not (x["case"] == last and x["rep_idx"] == 1)]
    gone = dict(next(x for x in runs if x["case"] == last and x["rep_idx"] == 1), status="interrupted")
    (run / "runs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept + [gone]))
    (run / "samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples
                                               if not (s["case"] == last and s["rep_idx"] == 1)))
    meta["status"] = "interrupted"
    (run / "meta.json").write_text(json.dumps(meta))
    r = run_driver(driver, "--resume", run, "--no-table", bin_dir=None, timeout=300)
    assert r.returncode == 0, r.stderr
    again = lines(run / "runs.jsonl")[len(kept) + 1:]
    assert [(x["case"], x["rep_idx"], x["status"], x["args"]) for x in again] == \
        [(last, 1, "ok", gone["args"])]
    assert len([s for s in lines(run / "samples.jsonl") if s["case"] == last and s["rep_idx"] == 1]) == 3 * CPUS


def test_scaling_regex_is_checked(driver, bin_dir):
    r = run_driver(driver, "--scaling=(", "--list", bin_dir=bin_dir)
    assert r.returncode == 2 and "--scaling" in r.stderr


def test_a_scaled_control_is_a_scaling_case(driver, bin_dir, tmp_path):
    """ctl_machine alu (a control) scaled: not a control of the run (it is
    filtered by --only like any case, its samples say control false), its
    declaration says scaling_control true: the machine's own efficiency."""
    out = tmp_path / "out"
    r = run_driver(driver, "--scaling=^ctl_machine alu$", "--only", " x[0-9]+$", "--no-controls", "--quick",
                   "--reps", "1", "--seed", "5", "--out", out, "--no-table", bin_dir=bin_dir, timeout=300)
    assert r.returncode == 0, r.stderr
    run = run_dir_of(r)
    assert sorted(x["case"] for x in lines(run / "runs.jsonl")) == [f"ctl_machine alu x{n}" for n in counts()]
    assert all(s["control"] is False for s in lines(run / "samples.jsonl"))
    decl = {d["case"]: d for d in lines(run / "cases.jsonl")}
    for n in counts():
        d = decl[f"ctl_machine alu x{n}"]
        assert (d["control"], d["scaling_control"], d["scaling_of"]) == (False, True, "ctl_machine alu")
    assert decl["ctl_machine alu"]["control"] is True


def test_one_cpu_the_scaling_cases_skip(driver, bin_dir, tmp_path):
    """With one CPU the counts are [1] and that case skips (77) with the
    binary's reason; the run goes on and ends 0."""
    one = sorted(os.sched_getaffinity(0))[0]
    r = run_driver(driver, "--scaling=^lat_syscall null$", "--only", " x[0-9]+$", "--no-controls", "--quick",
                   "--reps", "1", "--out", tmp_path / "out", "--no-table", bin_dir=bin_dir, timeout=300,
                   preexec_fn=lambda: os.sched_setaffinity(0, {one}))
    assert r.returncode == 0, r.stderr
    runs = lines(run_dir_of(r) / "runs.jsonl")
    assert [(x["case"], x["status"], x["exit_code"]) for x in runs] == [("lat_syscall null x1", "skipped", 77)]
    assert "scaling needs two CPUs or more" in runs[0]["reason"]
