"""make test-series-vm: a series and a bisection on real Debian kernels
(issue 29), each kernel booted by scripts/vm-run in a QEMU guest (emulated
where KVM cannot run it). Not part of make test: it downloads four kernel
packages (apt-get download, never installed) and boots a dozen guests
(four to five minutes under emulation on a 2-vCPU VM).

The series: KBENCH_SERIES_KERNELS (comma-separated package names; default
two 6.1 cloud kernels, the 6.1 PREEMPT_RT kernel and a 6.12 cloud kernel),
booted in a shuffled order, one quick run each; summarize --series puts
them in release order, makes one step per neighbour pair, lists changes
only between neighbours, and report --series writes the page with Where it
changed and a trend chart per summary-table cell. Every guest mounts its
ext4 disk (the rt kernel's ext4 needs crc32c_generic).

The bisection: a scratch git repository of six commits, each selecting a
kernel image taken from those packages (a "build" that copies it), the
cloud kernel before commit 4 and the rt kernel of the same version from
it on; the references recorded with bisect-step --record at the first and
last commit (two runs each), then git bisect run scripts/bisect-step must
end on commit 4 (or, when a step there stayed inconclusive and git skipped
it, on a list of at most three that holds it), no step judged wrongly.
The case that tells them apart is lat_pipe rt @same (about twice as slow
on the rt kernel in an emulated guest); the rt kernel also moves the
control cases there (ctl_machine copy up to 50% slower), so the steps run
--as-measured, and the built-in prior of the drift between
runs (without it, an inconclusive step's retry can widen the interval
past use: see test_git_bisect_run_on_debian_kernel_images)."""
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_bisect_step import choice_repo

ROOT = Path(__file__).resolve().parents[2]
VM_RUN = ROOT / "scripts" / "vm-run"
DEFAULT = ("linux-image-6.1.0-47-cloud-amd64,linux-image-6.1.0-57-cloud-amd64,linux-image-6.1.0-57-rt-amd64,"
           "linux-image-6.12.117+deb12-cloud-amd64")
KERNELS = [k.strip() for k in os.environ.get("KBENCH_SERIES_KERNELS", DEFAULT).split(",") if k.strip()]
GOOD_PKG = os.environ.get("KBENCH_BISECT_GOOD", "linux-image-6.1.0-57-cloud-amd64")
BAD_PKG = os.environ.get("KBENCH_BISECT_BAD", "linux-image-6.1.0-57-rt-amd64")
ONLY = r"^(lat_syscall (null|stat)|lat_pipe rt @same|lat_mmap mmap size_kb=64)$"
PIPE = r"^lat_pipe rt @same$"


def run(*args, cwd=None, env=None, timeout=1800):
    r = subprocess.run(list(map(str, args)), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in r.stderr, r.stderr
    return r


def release_key(name):
    """6.1.0-47-cloud-amd64 -> (6, 1, 0, 47, ...): numbers in the order they come."""
    return [int(x) if x.isdigit() else x for x in re.findall(r"\d+|[a-z]+", name)]


@pytest.fixture(scope="module")
def static():
    r = run("make", "-C", ROOT, "-s", "STATIC=1", "all", timeout=1800)
    assert r.returncode == 0, r.stderr
    return ROOT / "build" / "static"


def boot(kernel, out, static, *extra, only=ONLY):
    r = run(sys.executable, VM_RUN, "--out", out, "--no-summary", "--static", static, "--limit", "1200", *extra,
            kernel, "--", "--quick", "--reps", "3", "--only", only, timeout=1500)
    assert r.returncode == 0, r.stderr[-3000:]
    return Path(r.stdout.strip()), r.stderr


def test_a_series_of_debian_kernels(tmp_path, static):
    assert len(KERNELS) >= 4, "KBENCH_SERIES_KERNELS: four kernels or more"
    out = tmp_path / "results"
    releases = {}
    for k in random.Random(29).sample(KERNELS, len(KERNELS)):
        rd, err = boot(k, out, static)
        assert "guest: fs: ext4 on /dev/" in err, f"{k}: no ext4 disk in the guest"
        meta = json.loads((rd / "meta.json").read_text())
        assert meta["status"] == "complete" and meta["virt"] in ("emulated", "kvm")
        releases[k] = meta["kernel_release"]
    host = next(out.iterdir()).name
    labels = [f"{host}/{r}" for r in sorted(releases.values(), key=release_key)]
    r = run(sys.executable, ROOT / "scripts" / "summarize", "--series", out, "--json", tmp_path / "s.json",
            "--csv", tmp_path / "s.csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "Series of %d kernels: %s" % (len(labels), " < ".join(labels))
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["kernels"] == labels and doc["left_out"] == []
    assert [(s["from"], s["to"]) for s in doc["steps"]] == list(zip(labels, labels[1:]))
    for ch in doc["changes"]:
        assert labels.index(ch["kernel"]) == labels.index(ch["previous"]) + 1 == ch["position"]
        assert ch["verdict"] in ("significantly faster", "significantly slower", "FAILED"), ch
        assert ch["stayed"] in ("yes", "no", "back", "unjudged", "unknown")
    text = r.stdout
    assert ("Where it changed: nowhere." in text) != bool(doc["changes"])
    assert "WARNING: EMULATED" in r.stderr or "kvm" in json.dumps(doc)
    page = tmp_path / "index.html"
    r = run(sys.executable, ROOT / "scripts" / "report", "--series", out, "--out", page, "--no-samples")
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert html.index("id='series'") < html.index("id='trends'") < html.index("id='summary'")
    assert html.count("<svg class='trend'") >= 4
    assert " &rarr; ".join(f"<b>{x}</b>" for x in labels) in html


def image_of(package, dest):
    """The vmlinuz of a Debian kernel package (vm-run's download cache)."""
    debs = ROOT / "build" / "vm" / "debs"
    have = sorted(debs.glob(f"{package}_*.deb"))
    if not have:
        debs.mkdir(parents=True, exist_ok=True)
        assert run("apt-get", "download", package, cwd=debs).returncode == 0, f"apt-get download {package}"
        have = sorted(debs.glob(f"{package}_*.deb"))
    x = dest / package
    assert run("dpkg-deb", "-x", have[-1], x).returncode == 0
    image, = (x / "boot").glob("vmlinuz-*")
    return image


def test_git_bisect_run_on_debian_kernel_images(tmp_path, static):
    images = tmp_path / "images"
    images.mkdir()
    good, bad = image_of(GOOD_PKG, images), image_of(BAD_PKG, images)
    repo, commits, env = choice_repo(tmp_path / "linux", [bad if i >= 4 else good for i in range(6)])
    work = tmp_path / "bisect"
    # the built-in prior, not --no-prior: a retry pools two runs of the commit, and without the prior
    # their run level rests on one degree of freedom (one step's interval was 0.022..62.5 so)
    args = [sys.executable, ROOT / "scripts" / "bisect-step", "--only", PIPE, "--reps", "10",
            "--as-measured", "--work", work, "--build", "cp \"$(cat choice)\" out.img", "--image",
            "out.img", "--vm-args", f"--static {static} --limit 1200"]
    # two runs of each reference (--record again pools): one run a side leaves their difference to the
    # prior's drift of a run, and once the references did not differ significantly so
    for rev, which in ((commits[0], "good"), (commits[-1], "bad")) * 2:
        run("git", "checkout", "-q", rev, cwd=repo)
        r = run(*args, "--record", which, cwd=repo, env=env)
        assert r.returncode == 0, r.stderr
    run("git", "checkout", "-q", "master", cwd=repo)
    run("git", "bisect", "start", commits[-1], commits[0], cwd=repo, env=env)
    r = run("git", "bisect", "run", *args, cwd=repo, env=env, timeout=3600)
    # The planted commit, or, when a step near it stayed inconclusive (skipped: an emulated guest's
    # pipe drifts by 20-40% between boots), a short list that holds it; never a commit beside it alone.
    found = re.search(r"^([0-9a-f]{40}) is the first bad commit", r.stdout, re.M)
    if found:
        assert found.group(1) == commits[4], r.stdout + r.stderr
    else:
        assert "The first bad commit could be any of:" in r.stdout, r.stdout + r.stderr
        listed = re.findall(r"^([0-9a-f]{40})$", r.stdout.split("could be any of:", 1)[1], re.M)
        assert commits[4] in listed and len(listed) <= 3, r.stdout
    steps = [json.loads(x) for x in (work / "bisect-log.jsonl").read_text().splitlines()]
    assert [s["verdict"] for s in steps[:4]] == ["record good", "record bad"] * 2
    assert steps[0]["kernel"] != steps[1]["kernel"]
    for s in steps[4:]:
        # a step may be inconclusive (skip: git tests a neighbour), never wrong
        assert s["verdict"] in ("skip", "bad" if commits.index(s["commit"]) >= 4 else "good"), s
    page = tmp_path / "bisect.html"
    r = run(sys.executable, ROOT / "scripts" / "report", "--bisect", work / "bisect-log.jsonl", "--out", page,
            "--no-samples", work)
    assert r.returncode == 0, r.stderr
    assert page.read_text().count("<td class='s2'>bad</td>") == sum(s["verdict"] == "bad" for s in steps)
