"""kbench-campaign's command line (issue 42): usage errors, each refusal with
its message and exit status 3, the dry run's plan, status and a bad state
file, on a fake machine (KBENCH_CAMPAIGN_FAKE_ROOT: /proc and /sys read
under it, the euid and kexec's answer from files in it; nothing is ever
loaded, booted or installed). The real thing: make test-campaign."""
import json
import os
import struct
import subprocess

import pytest


def image(path, release):
    """A file with an x86 boot header naming RELEASE (what the campaign reads)."""
    head = bytearray(0x1000)
    head[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", head, 0x20E, 0x300)
    v = f"{release} (test) #1 SMP".encode()
    head[0x500:0x500 + len(v)] = v
    path.write_bytes(bytes(head))
    return str(path)


@pytest.fixture
def machine(tmp_path):
    root = tmp_path / "fake"
    (root / "proc/sys/kernel/random").mkdir(parents=True)
    (root / "sys/kernel/security").mkdir(parents=True)
    (root / "proc/sys/kernel/random/boot_id").write_text("b0\n")
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n")
    (root / "proc/sys/kernel/kexec_load_disabled").write_text("0\n")
    (root / "sys/kernel/security/lockdown").write_text("[none] integrity confidentiality\n")
    (root / "euid").write_text("0\n")
    (root / "kexec_probe").write_text("0\n")
    a = image(tmp_path / "vmlinuz-6.1", "6.1.0-57-cloud-amd64")
    b = image(tmp_path / "vmlinuz-6.12", "6.12.117+deb12-cloud-amd64")
    return root, a, b


def campaign(build_dir, tmp_path, root, *args):
    env = dict(os.environ, KBENCH_CAMPAIGN_FAKE_ROOT=str(root))
    return subprocess.run([str(build_dir / "bin" / "kbench-campaign"), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=60)


def test_help_and_usage_errors(build_dir, tmp_path, machine):
    root, a, b = machine
    r = campaign(build_dir, tmp_path, root, "--help")
    assert r.returncode == 0 and "--rounds K" in r.stdout and "--dry-run" in r.stdout
    assert campaign(build_dir, tmp_path, root).returncode == 2
    for args, words in ((["start", a], "at least two kernels"),
                        (["start", "--rounds", "0", a, b], "--rounds: expected an integer"),
                        (["start", "--frobnicate", a, b], "unknown option '--frobnicate'"),
                        (["start", a, b + ",colour=red"], "unknown option 'colour'"),
                        (["start", a, a], "both release 6.1.0-57-cloud-amd64"),
                        (["start", a, b, "--", "--out", "x"], "the campaign sets it itself"),
                        (["start", str(tmp_path), b], "a directory, not a kernel image"),
                        (["start", str(tmp_path / "fake" / "euid"), b], "not an x86 kernel image"),
                        (["frob"], "unknown command 'frob'")):
        r = campaign(build_dir, tmp_path, root, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert words in r.stderr and "Traceback" not in r.stderr


def test_dry_run_prints_the_balanced_plan(build_dir, tmp_path, machine):
    root, a, b = machine
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", "--rounds", "3", "--append", "mitigations=off",
                 "--results", "res", a, b + ",label=new", "--", "--quick")
    assert r.returncode == 0, r.stderr
    assert "order: A B B A A B" in r.stdout
    assert "command line: root=/dev/sda1 ro quiet mitigations=off" in r.stdout
    assert "release 6.12.117+deb12-cloud-amd64" in r.stdout
    assert "odd number of rounds" in r.stdout
    assert "kexec boots: 6 (one per step, the first included" in r.stdout
    assert not (tmp_path / "res").exists() or not list((tmp_path / "res").iterdir())  # nothing written


@pytest.mark.parametrize("setup, words", [
    (lambda root: (root / "euid").write_text("1000\n"), "needs root"),
    (lambda root: (root / "kexec_probe").write_text("ENOSYS\n"), "CONFIG_KEXEC_FILE"),
    (lambda root: (root / "kexec_probe").write_text("EPERM\n"), "not permitted"),
    (lambda root: (root / "sys/kernel/security/lockdown").write_text("none [integrity] confidentiality\n"),
     "locked down"),
    (lambda root: (root / "proc/sys/kernel/kexec_load_disabled").write_text("1\n"), "kexec_load_disabled"),
])
def test_refusals(build_dir, tmp_path, machine, setup, words):
    root, a, b = machine
    setup(root)
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 3, r.stderr
    assert "refused: " in r.stderr and words in r.stderr
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, b)
    assert r.returncode == 3 and "it would be refused" in r.stderr


def test_refused_missing_image_and_running_campaign(build_dir, tmp_path, machine):
    root, a, b = machine
    r = campaign(build_dir, tmp_path, root, "start", a, str(tmp_path / "vmlinuz-none"))
    assert r.returncode == 3 and "no such image" in r.stderr
    r = campaign(build_dir, tmp_path, root, "start", a, "9.9.9-nothere")
    assert r.returncode == 3 and "no such image: /boot/vmlinuz-9.9.9-nothere" in r.stderr
    running = tmp_path / "results" / "campaign-x"
    running.mkdir(parents=True)
    state = {"schema": "kbench-campaign/1", "id": "x", "mode": "host", "status": "running",
             "dir": str(running), "kernels": [{"spec": a, "status": "ok"}], "steps": [{"kernel": 0}]}
    (running / "campaign.json").write_text(json.dumps(state))
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 3 and "already running" in r.stderr and "make campaign-stop" in r.stderr
    r = campaign(build_dir, tmp_path, root, "status")
    assert r.returncode == 0 and "campaign x (host): running" in r.stdout
    # all checks pass on the fake machine: it says so and does nothing
    state["status"] = "stopped"
    (running / "campaign.json").write_text(json.dumps(state))
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 0 and "nothing done" in r.stderr


def test_bad_state_files(build_dir, tmp_path, machine):
    root, _a, _b = machine
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = campaign(build_dir, tmp_path, root, "resume", str(bad))
    assert r.returncode == 1 and "not JSON" in r.stderr
    bad.write_text('{"schema": "other"}')
    r = campaign(build_dir, tmp_path, root, "status", str(bad))
    assert r.returncode == 1 and "not a kbench campaign state" in r.stderr
    r = campaign(build_dir, tmp_path, root, "stop", "--results", str(tmp_path / "none"))
    assert r.returncode == 3 and "no campaign is running" in r.stderr


def test_the_reference_names_only_real_options_and_targets(build_dir):
    """src/reference/campaign.md: every --option it shows is one of
    kbench-campaign's, kbench-run's or scripts/vm-run's, every make X a target."""
    import re
    import sys
    root = next(p for p in [build_dir.resolve(), *build_dir.resolve().parents] if (p / "Makefile").is_file())
    doc = (root / "src" / "reference" / "campaign.md").read_text()
    known = set()
    for cmd in ([str(build_dir / "bin" / "kbench-campaign")], [str(build_dir / "bin" / "kbench-run")],
                [sys.executable, str(root / "scripts" / "vm-run")]):
        r = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60)
        known |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", r.stdout + r.stderr))
    shown = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", doc))
    assert shown - known == set()
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", (root / "Makefile").read_text(), re.M))
    assert set(re.findall(r"make ([a-z][a-z0-9-]*)", doc)) - targets == set()


def test_stop_ends_a_running_campaign(build_dir, tmp_path, machine):
    root, a, b = machine
    d = tmp_path / "results" / "campaign-y"
    d.mkdir(parents=True)
    state = {"schema": "kbench-campaign/1", "id": "y", "mode": "host", "status": "running", "dir": str(d),
             "kernels": [{"spec": a, "release": "6.1", "status": "ok"}, {"spec": b, "release": "6.12", "status": "ok"}],
             "steps": [{"kernel": 0, "status": "done"}, {"kernel": 1, "status": "running", "boot_id": "b0"},
                       {"kernel": 1, "status": "pending"}, {"kernel": 0, "status": "pending"}],
             "boots": [{"kernel": -1, "release": "6.1", "boot_id": "b0", "note": "the campaign began"}],
             "hook_files": [], "pid": 0}
    (d / "campaign.json").write_text(json.dumps(state))
    (root / "euid").write_text("1000\n")
    r = campaign(build_dir, tmp_path, root, "stop")
    assert r.returncode == 3 and "needs root" in r.stderr
    (root / "euid").write_text("0\n")
    r = campaign(build_dir, tmp_path, root, "stop")
    assert r.returncode == 0, r.stderr
    assert "would reboot" not in r.stderr  # the boot it began in: the default kernel already
    s = json.loads((d / "campaign.json").read_text())
    assert s["status"] == "stopped"
    assert [p["status"] for p in s["steps"]] == ["done", "pending", "pending", "pending"]
    assert s["steps"][1]["reason"].startswith("not run: the campaign was stopped (cut once")
    assert s["steps"][2]["reason"] == "not run: the campaign was stopped"
    assert not (d / "campaign.json.tmp").exists()
    r = campaign(build_dir, tmp_path, root, "stop")
    assert r.returncode == 3 and "no campaign is running" in r.stderr


FAKE_VM_RUN = r"""#!/bin/sh
# a stand-in for scripts/vm-run: --out DIR ... KERNEL -- ...; prints a run directory
out=$2
case "$*" in *nobody-boots*) exit 3 ;; esac
if [ -f "$KB_TEST_SLOW" ]; then rm -f "$KB_TEST_SLOW"; touch "$KB_TEST_SLOW.started"; sleep 30; fi
d=$out/vm-h/rel/run-$$
mkdir -p "$d" && echo '{"status": "complete"}' > "$d/meta.json" && echo "$d"
"""


def test_the_loop_in_vm_mode_ctrl_c_a_dead_guest_and_the_end(build_dir, tmp_path, machine):
    """resume drives a campaign to its end (vm mode, a stand-in vm-run): a
    step cut by Ctrl-C goes back to pending (exit 130) and runs again at the
    next resume; a kernel whose guest gives no run (vm-run's 3) fails with
    its other steps; each other step runs exactly once."""
    import signal
    import time
    root, _a, _b = machine
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "vm-run").write_text(FAKE_VM_RUN)
    d = tmp_path / "results" / "campaign-z"
    d.mkdir(parents=True)
    state = {"schema": "kbench-campaign/1", "id": "z", "mode": "vm", "status": "running", "dir": str(d),
             "repo": str(repo), "python": "/bin/sh", "run_args": ["--quick"],
             "kernels": [{"spec": "k1", "image": "k1", "status": "ok"},
                         {"spec": "k2", "image": "nobody-boots", "status": "ok"}],
             "steps": [{"kernel": k, "status": "pending"} for k in (0, 1, 1, 0)]}
    (d / "campaign.json").write_text(json.dumps(state))
    slow = tmp_path / "slow"
    slow.write_text("")
    env = dict(os.environ, KBENCH_CAMPAIGN_FAKE_ROOT=str(root), KB_TEST_SLOW=str(slow))
    p = subprocess.Popen([str(build_dir / "bin" / "kbench-campaign"), "resume", str(d / "campaign.json")],
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    for _ in range(300):
        if (tmp_path / "slow.started").exists():
            break
        time.sleep(0.1)
    os.killpg(p.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole group
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "interrupted" in err
    s = json.loads((d / "campaign.json").read_text())
    assert s["status"] == "running" and s["steps"][0]["status"] == "pending"
    assert "interrupted once" in s["steps"][0]["reason"]
    r = subprocess.run([str(build_dir / "bin" / "kbench-campaign"), "resume", str(d / "campaign.json")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    s = json.loads((d / "campaign.json").read_text())
    assert s["status"] == "finished"
    assert [p["status"] for p in s["steps"]] == ["done", "failed", "failed", "done"]
    assert s["kernels"][1]["status"] == "failed" and "vm-run exit 3" in s["kernels"][1]["reason"]
    runs = sorted((d / "A" / "vm-h" / "rel").iterdir())
    assert len(runs) == 2  # the cut step's stand-in made no run; each step ran once
    assert {p["run_dir"] for p in s["steps"] if p["status"] == "done"} == {str(r) for r in runs}
    r = subprocess.run([str(build_dir / "bin" / "kbench-campaign"), "resume", str(d / "campaign.json")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0 and "nothing to do" in r.stderr
