"""scripts/bisect-step under `git bisect run` (issue 29), end to end, on a
scratch git repository whose commits each select a kernel image (a fake
build copies a ready one), booted by scripts/vm-run with the fake QEMU
(tests/fake_qemu, FAKE_QEMU_MODE=fixture: a synthetic run whose cases are
slower by the factor the image carries).  Also: an inconclusive commit
gives 125, a build failure stops the bisection and says why."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_vm_run import FAKE_QEMU, fake_image, fake_static  # noqa: F401  (fake_static: a fixture)

ROOT = Path(__file__).resolve().parents[2]
BISECT = ROOT / "scripts" / "bisect-step"
CASES = r"^lat_syscall (null|stat)$"
SLOW = r"^lat_syscall stat$"
FACTOR = 1.30       # the bad kernel's lat_syscall stat
DATA = ROOT / "tests" / "data"


def sh(*args, cwd=None, env=None, check=True):
    r = subprocess.run(list(map(str, args)), cwd=cwd, capture_output=True, text=True, env=env)
    if check and r.returncode != 0:
        raise AssertionError(f"{args}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def image(path, release, scale):
    fake_image(path, release)
    path.write_bytes(path.read_bytes() + f"KBENCH-FAKE-SCALE={scale}\0".encode())
    return path


@pytest.fixture
def kernel_repo(tmp_path):
    """Eight commits; from the sixth on, the build selects the slow image."""
    images = tmp_path / "images"
    images.mkdir()
    image(images / "fast.img", "6.9.0-fast", 1.0)
    image(images / "slow.img", "6.9.0-slow", FACTOR)
    repo, commits, env = choice_repo(tmp_path / "linux", ["slow" if i >= 5 else "fast" for i in range(8)])
    return repo, images, commits, env


def choice_repo(repo, choices):
    """A scratch kernel tree: one commit per choice, each writing it to the
    file `choice` (what the fake build copies). (repo, commit hashes, the
    environment git needs to commit)."""
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    sh("git", "init", "-q", "-b", "master", cwd=repo)
    commits = []
    for i, choice in enumerate(choices):
        (repo / "choice").write_text(str(choice))
        sh("git", "add", "choice", cwd=repo)
        sh("git", "commit", "-q", "-m", f"commit {i}", "--allow-empty", cwd=repo, env=env)
        commits.append(sh("git", "rev-parse", "HEAD", cwd=repo).stdout.strip())
    return repo, commits, env


def step_args(static, images, work):
    return ["--only", CASES, "--reps", "5", "--build", f"cp {images}/$(cat choice).img out.img", "--image",
            "out.img", "--work", str(work), "--vm-args", f"--static {static} --disk-mb 8"]


def test_git_bisect_run_ends_on_the_planted_commit(tmp_path, kernel_repo, fake_static):
    repo, images, commits, env = kernel_repo
    work = tmp_path / "work"
    args = step_args(fake_static, images, work)
    env = dict(env, KBENCH_VM_QEMU=str(FAKE_QEMU), FAKE_QEMU_MODE="fixture", FAKE_QEMU_LOG=str(tmp_path / "q.log"),
               FAKE_QEMU_CASES=CASES, FAKE_QEMU_SCALED=SLOW)
    for rev, which in ((commits[0], "good"), (commits[-1], "bad")):
        sh("git", "checkout", "-q", rev, cwd=repo)
        r = sh(sys.executable, BISECT, "--record", which, *args, cwd=repo, env=env)
        assert f"bisect-step: {which} reference: {work / which}" in r.stderr
    sh("git", "checkout", "-q", "master", cwd=repo)
    sh("git", "bisect", "start", commits[-1], commits[0], cwd=repo, env=env)
    r = sh("git", "bisect", "run", sys.executable, BISECT, *args, cwd=repo, env=env)
    assert f"{commits[5]} is the first bad commit" in r.stdout, r.stdout + r.stderr
    steps = [json.loads(x) for x in (work / "bisect-log.jsonl").read_text().splitlines()]
    assert [s["verdict"] for s in steps[:2]] == ["record good", "record bad"]
    tested = steps[2:]
    assert tested and all(s["verdict"] == ("bad" if commits.index(s["commit"]) >= 5 else "good") for s in tested)
    assert all(s["exit"] == (1 if s["verdict"] == "bad" else 0) for s in tested)
    for s in tested:
        assert s["kernel"] == ("6.9.0-slow" if s["verdict"] == "bad" else "6.9.0-fast")
        assert s["ci_low"] < s["ratio"] < s["ci_high"] and s["cases"][0]["case"] == "lat_syscall stat"
        mid = s["cases"][0]["midpoint"]
        assert (s["ci_low"] > mid) if s["verdict"] == "bad" else (s["ci_high"] < mid)
    assert sorted({s["commit"] for s in tested}) == sorted(s["commit"] for s in tested)   # each tested once


def fixture_run_cmd(tmp_path, scale):
    """A --run command (real hardware's stand-in) that writes a synthetic
    run under $KBENCH_BISECT_OUT, lat_syscall stat times scale."""
    script = tmp_path / "measure.py"
    script.write_text(
        "import os, pathlib, sys\n"
        f"sys.path.insert(0, {str(DATA)!r})\n"
        "import make_fixture as g\n"
        "cases = [c for c in g.suite_cases('small') if c['bench'] == 'lat_syscall' and c['variant'] in ('null', 'stat')]\n"
        "n = sum(1 for _ in pathlib.Path(os.environ['KBENCH_BISECT_OUT']).rglob('meta.json'))\n"
        "g.make_run(os.environ['KBENCH_BISECT_OUT'], 'hw', 'k', seed=100 * n + int(float(sys.argv[1]) * 1000), reps=5,\n"
        "           samples=3, cases=cases, scale={'stat$': float(sys.argv[1])}, failures=False)\n")
    return f"{sys.executable} {script} {scale}"


def references(tmp_path, gen):
    cases = [c for c in gen.suite_cases("small") if c["bench"] == "lat_syscall" and c["variant"] in ("null", "stat")]
    gen.make_run(tmp_path / "good", "hw", "good", seed=1, reps=5, samples=3, cases=cases, failures=False)
    gen.make_run(tmp_path / "bad", "hw", "bad", seed=2, reps=5, samples=3, cases=cases, failures=False,
                 scale={"stat$": FACTOR})
    return ["--good", str(tmp_path / "good"), "--bad", str(tmp_path / "bad"), "--only", CASES, "--reps", "5",
            "--work", str(tmp_path / "work"), "--tree", str(tmp_path)]


@pytest.fixture(scope="module")
def gen():
    sys.path.insert(0, str(DATA))
    import make_fixture
    return make_fixture


def test_real_hardware_command_good_bad_and_inconclusive(tmp_path, gen):
    refs = references(tmp_path, gen)
    kernel = fake_image(tmp_path / "bzImage", "6.9.0-hw")
    for scale, code, word in ((1.0, 0, "closer to good (exit 0)"), (FACTOR, 1, "closer to bad (exit 1)"),
                              (FACTOR ** 0.5, 125, "inconclusive with 15 reps (exit 125: git skips it)")):
        r = sh(sys.executable, BISECT, *refs, "--kernel", kernel, "--run", fixture_run_cmd(tmp_path, scale), check=False)
        assert r.returncode == code, r.stderr
        assert word in r.stderr and "Traceback" not in r.stderr
    steps = [json.loads(x) for x in (tmp_path / "work" / "bisect-log.jsonl").read_text().splitlines()]
    assert [(s["verdict"], s["exit"], s["reps"]) for s in steps] == [("good", 0, 5), ("bad", 1, 5), ("skip", 125, 15)]
    assert "inconclusive with 5 reps: again with 10, pooled with the first run" in r.stderr


def test_a_build_failure_stops_the_bisection_and_says_why(tmp_path, gen):
    refs = references(tmp_path, gen)
    fail = ["--build", "echo 'drivers/foo.c:12: error: oops' >&2; exit 2"]
    r = sh(sys.executable, BISECT, *refs, *fail, check=False)
    assert r.returncode == 128
    assert "the build failed (exit 2: echo" in r.stderr and "drivers/foo.c:12: error: oops" in r.stderr
    assert "stopping the bisection: exit 128" in r.stderr
    r = sh(sys.executable, BISECT, *refs, *fail, "--on-build-failure", "skip", check=False)
    assert r.returncode == 125 and "skipping this commit" in r.stderr
    steps = [json.loads(x) for x in (tmp_path / "work" / "bisect-log.jsonl").read_text().splitlines()]
    assert [(s["verdict"], s["exit"]) for s in steps] == [("abort", 128), ("skip", 125)]
    assert steps[0]["note"].startswith("the build failed (exit 2")
    # git bisect run stops on it
    repo = tmp_path / "repo"
    repo.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    sh("git", "init", "-q", cwd=repo)
    for i in range(3):
        sh("git", "commit", "-q", "--allow-empty", "-m", f"c{i}", cwd=repo, env=env)
    sh("git", "bisect", "start", "HEAD", "HEAD~2", cwd=repo, env=env)
    r = sh("git", "bisect", "run", sys.executable, BISECT, *refs[:-1], str(repo), *fail, cwd=repo, env=env,
           check=False)
    assert r.returncode != 0 and "is the first bad commit" not in r.stdout
    assert "128" in r.stdout + r.stderr


def test_bad_use_stops_the_bisection(tmp_path, gen):
    r = sh(sys.executable, BISECT, "--only", CASES, "--work", str(tmp_path / "w"), "--kernel", str(tmp_path / "x"),
           check=False)
    assert r.returncode == 129 and "--kernel" in r.stderr and "no such file" in r.stderr
    kernel = fake_image(tmp_path / "bzImage", "6.9.0-hw")
    r = sh(sys.executable, BISECT, "--only", CASES, "--work", str(tmp_path / "w"), "--kernel", kernel, check=False)
    assert r.returncode == 129 and "no good reference run in" in r.stderr and "--record good" in r.stderr
    r = sh(sys.executable, BISECT, check=False)
    assert r.returncode == 129 and "--only" in r.stderr
    refs = references(tmp_path, gen)
    r = sh(sys.executable, BISECT, *refs[:-6], "--only", r"^lat_syscall null$", "--kernel", kernel, check=False)
    assert r.returncode == 129 and "do not differ in the cases of --only" in r.stderr


def test_references_across_a_machine_shift_say_so_and_as_measured_lets_them_differ(tmp_path, gen):
    """The controls 50% slower on bad (as a PREEMPT_RT kernel's ctl_machine
    copy in an emulated guest): compare judges nothing across a machine
    shift, and bisect-step says that (not "do not differ") and how to go
    on; --as-measured bisects."""
    refs = references(tmp_path, gen)
    for side, factor, seed in (("good", 1.0, 11), ("bad", 1.5, 12)):
        run_dir, = (p.parent for p in (tmp_path / side).rglob("meta.json"))
        gen.add_control(run_dir, factor, seed, "copy", 30000.0)
    kernel = fake_image(tmp_path / "bzImage", "6.9.0-hw")
    run = ["--kernel", kernel, "--run", fixture_run_cmd(tmp_path, 1.0)]
    r = sh(sys.executable, BISECT, *refs, *run, check=False)
    assert r.returncode == 129, r.stderr
    import re
    assert re.match(r"bisect-step: the control cases moved between the good and bad references, bad against good: "
                    r"machine shift: the CPU controls ran (49|50)\.\d% slower, beyond what the runs of this host have "
                    r"shown \(up to [\d.]+%\)\. The cases are not judged between them\.", r.stderr), r.stderr
    assert "give --as-measured" in r.stderr and "do not differ" not in r.stderr
    assert not (tmp_path / "work" / "bisect-log.jsonl").exists()       # nothing measured
    r = sh(sys.executable, BISECT, *refs, *run, "--as-measured", check=False)
    assert r.returncode == 0 and "closer to good (exit 0)" in r.stderr, r.stderr
