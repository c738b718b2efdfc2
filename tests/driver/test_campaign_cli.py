"""kbench-campaign's command line (issues 42 and 59): usage errors, each
refusal with its message and exit status 3, the dry run's plan, status and
a bad state file, and whole campaigns, on a fake machine
(KBENCH_CAMPAIGN_FAKE_ROOT: /proc and /sys read under it, the euid, the
release and kexec's answers from files in it, the hook's files written
under it; nothing is ever loaded or booted: a reboot is a line in
DIR/reboots, and a test plays the next boot by rewriting the fake /proc).
The real thing: make test-campaign."""
import json
import os
import struct
import subprocess

import pytest


def image(path, release, build="#1 SMP", initrd=True):
    """A file with an x86 boot header naming RELEASE (what the campaign reads)
    and, beside it, its initrd by Debian's name."""
    head = bytearray(0x1000)
    head[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", head, 0x20E, 0x300)
    v = f"{release} (test@box) {build}".encode()
    head[0x500:0x500 + len(v)] = v
    path.write_bytes(bytes(head))
    if initrd:
        (path.parent / f"initrd.img-{path.name[len('vmlinuz-'):]}").write_text("initrd")
    return str(path)


RELEASES = {"6.1": "6.1.0-57-cloud-amd64", "6.12": "6.12.117+deb12-cloud-amd64"}


@pytest.fixture
def machine(tmp_path):
    root = tmp_path / "fake"
    (root / "proc/sys/kernel/random").mkdir(parents=True)
    (root / "sys/kernel/security").mkdir(parents=True)
    (root / "proc/sys/kernel/random/boot_id").write_text("b0\n")
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n")
    (root / "proc/version").write_text(f"Linux version {RELEASES['6.1']} (test@box) (gcc 12) #1 SMP\n")
    (root / "release").write_text(RELEASES["6.1"] + "\n")
    (root / "proc/sys/kernel/kexec_load_disabled").write_text("0\n")
    (root / "sys/kernel/security/lockdown").write_text("[none] integrity confidentiality\n")
    (root / "euid").write_text("0\n")
    (root / "kexec_probe").write_text("0\n")
    (root / "run").mkdir()
    for rel in RELEASES.values():
        (root / "lib/modules" / rel).mkdir(parents=True)
    a = image(tmp_path / "vmlinuz-6.1", RELEASES["6.1"])
    b = image(tmp_path / "vmlinuz-6.12", RELEASES["6.12"])
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
                        (["start", "--step-deadline", "0", a, b], "--step-deadline: expected seconds"),
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
    (root / "proc/tty/driver").mkdir(parents=True)
    (root / "proc/tty/driver/serial").write_text("serinfo:1.0 driver revision:\n0: uart:16550A port:000003F8 irq:4\n")
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", "--rounds", "3", "--append", "mitigations=off",
                 "--results", "res", a, b + ",label=new", "--", "--quick", "--budget", "100")
    assert r.returncode == 0, r.stderr
    assert "order: A B B A A B" in r.stdout
    # the safety options, a console on the machine's UART, then KERNEL_ARGS
    assert ("command line: root=/dev/sda1 ro quiet panic=10 oops=panic softlockup_panic=1 console=tty0 "
            "console=ttyS0,115200n8 mitigations=off") in r.stdout
    assert f"initrd {tmp_path}/initrd.img-6.12" in r.stdout  # Debian's name beside the image
    assert "release 6.12.117+deb12-cloud-amd64" in r.stdout
    assert "odd number of rounds" in r.stdout
    assert "kexec boots: 6 (one per step, the first included" in r.stdout
    assert "deadline of a step: 1200 s" in r.stdout  # 3 x --budget + 900
    assert not (tmp_path / "res").exists() or not list((tmp_path / "res").iterdir())  # nothing written
    assert not (root / "usr").exists() and not (root / "etc").exists()


@pytest.mark.parametrize("setup, words", [
    (lambda root: (root / "euid").write_text("1000\n"), "needs root"),
    (lambda root: (root / "kexec_probe").write_text("ENOSYS\n"), "CONFIG_KEXEC_FILE"),
    (lambda root: (root / "kexec_probe").write_text("EPERM\n"), "not permitted"),
    (lambda root: (root / "proc/sys/kernel/kexec_load_disabled").write_text("1\n"), "kexec_load_disabled"),
    (lambda root: (root / "kexec_load").write_text("vmlinuz-6.12 ENOEXEC\n"),
     "a trial kexec_file_load refused it, before any reboot: ENOEXEC"),
])
def test_refusals(build_dir, tmp_path, machine, setup, words):
    root, a, b = machine
    setup(root)
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 3, r.stderr
    assert "refused: " in r.stderr and words in r.stderr
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, b)
    assert r.returncode == 3 and "it would be refused" in r.stderr
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").iterdir())


def test_lockdown_refuses_only_what_the_trial_load_refuses(build_dir, tmp_path, machine):
    """Under lockdown a signed image still kexecs: no refusal for the
    lockdown itself; an unsigned one is refused by its trial load, the
    errno named, before anything is installed."""
    root, a, b = machine
    (root / "sys/kernel/security/lockdown").write_text("none [integrity] confidentiality\n")
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, b)
    assert r.returncode == 0, r.stderr
    (root / "kexec_load").write_text("vmlinuz-6.12 EPERM\n")
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 3
    assert "kernel B" in r.stderr and "EPERM (Operation not permitted)" in r.stderr and "locked down" in r.stderr
    assert "lockdown=none" not in r.stderr
    assert not (root / "usr").exists() and not (root / "etc").exists()


def test_a_kernel_without_an_initrd_is_refused_unless_initrd_none(build_dir, tmp_path, machine):
    root, a, _b = machine
    bz = tmp_path / "tree" / "bzImage"
    bz.parent.mkdir()
    image(bz, "6.13.0-rc1", initrd=False)
    (root / "lib/modules/6.13.0-rc1").mkdir(parents=True)
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, str(bz))
    assert r.returncode == 3
    assert "no initrd found (looked for " + str(bz.parent / "initrd.img-6.13.0-rc1") in r.stderr
    assert "/boot/initramfs-6.13.0-rc1.img" in r.stderr and ",initrd=none" in r.stderr
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, str(bz) + ",initrd=none")
    assert r.returncode == 0, r.stderr
    assert "initrd none (initrd=none)" in r.stdout
    (root / "lib/modules/6.13.0-rc1").rmdir()
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, str(bz) + ",initrd=none")
    assert r.returncode == 0 and "warning: kernel B" in r.stderr and "no /lib/modules/6.13.0-rc1" in r.stderr


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
    known |= {"--no-block", "--wait"}  # systemctl's, in the commands the hook runs
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


# ---- whole campaigns on the fake machine -----------------------------------

FAKE_RUN = r"""#!/bin/sh
# a stand-in for kbench-run: --out DIR [--label L] ...: a run directory with
# its meta.json, printed; with --label hangs it never ends (until killed)
out=$2
echo "fake kbench-run $*" >&2
[ -f "$KBENCH_CAMPAIGN_FAKE_ROOT/run/nologin" ] && echo "logins kept off" >&2
[ -f "$KBENCH_CAMPAIGN_FAKE_ROOT/systemctl-log" ] && echo "kbench-run" >> "$KBENCH_CAMPAIGN_FAKE_ROOT/systemctl-log"
case " $* " in *" --label hangs "*) sleep 600; exit 1 ;; esac
d=$out/h/rel/run-$$
mkdir -p "$d" && echo '{"status": "complete"}' > "$d/meta.json" && echo "$d"
"""


class Fake:
    """A fake machine a campaign runs on: its hook is the copy of the program
    under the fake root; a reboot is a line in DIR/reboots; the next boot is
    played by rewriting the fake /proc."""

    def __init__(self, build_dir, tmp_path, root):
        self.build_dir, self.tmp, self.root = build_dir, tmp_path, root
        self.boots = 0
        bins = tmp_path / "bin"
        bins.mkdir()
        (bins / "kbench-run").write_text(FAKE_RUN)
        (bins / "kbench-run").chmod(0o755)
        self.bin_dir = str(bins)
        self.env = dict(os.environ, KBENCH_CAMPAIGN_FAKE_ROOT=str(root))

    def start(self, *args, hang_up=False, reboots=1):
        import signal
        import time
        cmd = [str(self.build_dir / "bin" / "kbench-campaign"), "start", "--bin-dir", self.bin_dir, *args]
        if hang_up:  # start stops a second once it has written its state: the session drops then
            (self.root / "start_pause").write_text("1\n")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env,
                             cwd=self.tmp, start_new_session=True)
        if hang_up:
            for _ in range(200):
                if list((self.tmp / "results").glob("campaign-*/campaign.json")):
                    break
                time.sleep(0.02)
            while p.poll() is None:  # SIGHUP to its whole session, as a terminal's hang-up, again and again
                try:
                    os.killpg(p.pid, signal.SIGHUP)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
        out, err = p.communicate(timeout=60)
        if reboots:
            self.wait_reboot(reboots)
        return p.returncode, out, err

    def reboots(self):
        f = self.root / "reboots"
        return f.read_text().split() if f.exists() else []

    def wait_reboot(self, n):
        import time
        for _ in range(300):
            if len(self.reboots()) >= n:
                return
            time.sleep(0.05)
        raise AssertionError(f"no reboot {n}: {self.reboots()}")

    def wait_driver(self, timeout=60):
        """A reboot ends every process of the boot that asked for it. Here
        the process that asked (the one start hands over to, detached)
        writes its line in DIR/reboots and then exits, slowly under ASan
        on a loaded machine (LeakSanitizer's scan): wait until it has let
        go of the campaign, its lock on the campaign's directory, which the
        kernel drops when it exits. A hook of the next boot would find it
        still driving the campaign and refuse (exit 3)."""
        import fcntl
        import time
        (f,) = (self.tmp / "results").glob("campaign-*/campaign.json")  # not read: a test may have spoilt it
        fd = os.open(f.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    return
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        import re
                        pid = re.search(r'"pid": *(\d+)', f.read_text())
                        raise AssertionError(f"{timeout} s after reboot {len(self.reboots())} a process still drives "
                                             f"{f.parent} (the last driver's pid: {pid and pid[1]})") from None
                    time.sleep(0.02)
        finally:
            os.close(fd)  # and the lock with it

    def state(self):
        (f,) = (self.tmp / "results").glob("campaign-*/campaign.json")
        return json.loads(f.read_text()), f

    def boot(self, asked=True):
        """The next boot: the one the campaign asked for (its marker, its
        build), or the default kernel after a failure (neither). It begins
        once the boot before has ended (wait_driver)."""
        self.wait_driver()
        self.boots += 1
        (self.root / "proc/sys/kernel/random/boot_id").write_text(f"boot{self.boots}\n")
        if asked:
            s = self.state()[0]
            pb = s["pending_boot"]
            k = s["kernels"][pb["kernel"]]
            (self.root / "proc/cmdline").write_text(k["cmdline"] + " " + pb["marker"] + "\n")
            (self.root / "proc/version").write_text(f"Linux version {k['release']} (test@box) (gcc 12) #1 SMP\n")
            (self.root / "release").write_text(k["release"] + "\n")
        else:
            (self.root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n")
            (self.root / "proc/version").write_text(f"Linux version {RELEASES['6.1']} (test@box) (gcc 12) #1 SMP\n")
            (self.root / "release").write_text(RELEASES["6.1"] + "\n")

    def hook(self, *args):
        """What the boot hook runs: the copy of the program."""
        exe = self.root / "usr/local/sbin/kbench-campaign-hook"
        return subprocess.run([str(exe), *args], capture_output=True, text=True, env=self.env, timeout=120)


def test_a_whole_campaign_each_step_on_its_own_boot(build_dir, tmp_path, machine):
    root, a, b = machine
    m = Fake(build_dir, tmp_path, root)
    rc, out, err = m.start("--rounds", "2", a, b)
    assert rc == 0, err
    assert "goes on by itself now" in err and "campaign.log" in err
    s, state = m.state()
    # the hook: recorded, written, a copy of the program in a system path
    assert s["hook_kind"] == "initd"
    assert s["hook_files"] == ["/etc/init.d/S99kbench-campaign", "/usr/local/sbin/kbench-campaign-hook"]
    script = (root / "etc/init.d/S99kbench-campaign").read_text()
    assert f"# state: {state}" in script
    assert f"'/usr/local/sbin/kbench-campaign-hook' resume '{state}' || '/usr/local/sbin/kbench-campaign-hook' home" in script
    assert (root / "usr/local/sbin/kbench-campaign-hook").read_bytes() == (build_dir / "bin/kbench-campaign").read_bytes()
    # the hook took over at once and asked for step 1's boot: A too gets a boot of its own
    assert m.reboots() == ["kexec"]
    assert s["pending_boot"]["step"] == 0 and s["pending_boot"]["marker"] == f"kbench.campaign={s['id']}:1:1"
    for n in range(2, 5):
        m.boot()
        r = m.hook("resume", str(state))
        assert r.returncode == 0, r.stderr
        assert m.reboots() == ["kexec"] * n
    m.boot()
    r = m.hook("resume", str(state))
    assert r.returncode == 0, r.stderr
    s, _ = m.state()
    assert s["status"] == "finished"
    assert [p["status"] for p in s["steps"]] == ["done"] * 4
    assert len({p["boot_id"] for p in s["steps"]}) == 4 and "b0" not in {p["boot_id"] for p in s["steps"]}
    assert m.reboots() == ["kexec"] * 4 + ["reboot"]  # then home, through the firmware
    assert not (root / "etc/init.d/S99kbench-campaign").exists()
    assert not (root / "usr/local/sbin/kbench-campaign-hook").exists()
    # each step's messages in its log, the campaign's in its own
    d = state.parent
    assert "fake kbench-run" in (d / "logs" / "step-01-A.log").read_text()
    assert "fake kbench-run" in (d / "logs" / "step-04-A.log").read_text()
    log = (d / "campaign.log").read_text()
    assert "booted B" in log and "step 4/4" in log
    r = campaign(build_dir, tmp_path, root, "status")
    assert "finished; steps 4 done" in r.stdout and "step 4 boot 1" in r.stdout


def test_a_boot_without_its_marker_is_tried_once_more_then_its_kernel_fails(build_dir, tmp_path, machine):
    """The second kernel is the default one's release under another label
    (a patched build): its kexec fails twice and the machine comes back in
    the default kernel of the same release; that boot is never taken for it."""
    root, a, _b = machine
    patched = tmp_path / "p" / "vmlinuz-6.1"
    patched.parent.mkdir()
    image(patched, RELEASES["6.1"], build="#2 SMP")
    m = Fake(build_dir, tmp_path, root)
    assert m.start("--rounds", "1", a, str(patched) + ",label=patched")[0] == 0
    s, state = m.state()
    m.boot()
    assert m.hook("resume", str(state)).returncode == 0  # A's step, then the kexec for B
    for attempt in (1, 2):
        (root / "sys/fs/pstore").mkdir(parents=True, exist_ok=True)
        (root / "sys/fs/pstore" / f"dmesg-efi-{attempt}").write_text(f"Kernel panic - not syncing: {attempt}\n")
        m.boot(asked=False)
        r = m.hook("resume", str(state))
        assert r.returncode == 0, r.stderr
        assert "without the boot's marker" in r.stderr
        kept = state.parent / "evidence" / f"step-02-boot-{attempt}" / f"pstore-dmesg-efi-{attempt}"
        assert kept.read_text() == f"Kernel panic - not syncing: {attempt}\n"  # kept with the campaign
    s, _ = m.state()
    assert s["status"] == "finished"
    assert [p["status"] for p in s["steps"]] == ["done", "failed"]
    assert s["kernels"][1]["status"] == "failed" and "failed 2 times" in s["kernels"][1]["reason"]
    assert s["steps"][1]["boots"] == 2 and s["steps"][1]["run_dir"] == ""
    assert m.reboots() == ["kexec", "kexec", "kexec"]  # the end in the default kernel: no reboot


def test_a_step_past_its_deadline_is_failed_and_the_machine_goes_home(build_dir, tmp_path, machine):
    root, a, b = machine
    m = Fake(build_dir, tmp_path, root)
    assert m.start("--rounds", "1", "--step-deadline", "2", a, b + ",label=hangs")[0] == 0
    _s, state = m.state()
    m.boot()
    assert m.hook("resume", str(state)).returncode == 0
    m.boot()
    r = m.hook("resume", str(state))  # B's step never ends
    assert r.returncode == 0, r.stderr
    s, _ = m.state()
    assert s["steps"][1]["status"] == "failed" and "deadline of 2 s" in s["steps"][1]["reason"]
    assert m.reboots() == ["kexec", "kexec", "reboot"]  # home through the firmware
    assert s["status"] == "running"  # the campaign goes on from the default kernel
    m.boot(asked=False)
    assert m.hook("resume", str(state)).returncode == 0
    assert m.state()[0]["status"] == "finished"


def test_the_terminal_hanging_up_does_not_stop_the_campaign(build_dir, tmp_path, machine):
    root, a, b = machine
    m = Fake(build_dir, tmp_path, root)
    rc, _out, err = m.start("--rounds", "1", a, b, hang_up=True)
    assert rc == 0, err  # it finished its work and handed over
    s, _ = m.state()
    assert m.reboots() == ["kexec"] and s["pending_boot"]["step"] == 0, (rc, err)
    assert (root / "etc/init.d/S99kbench-campaign").exists()


def test_the_hooks_failure_takes_a_test_boot_home(build_dir, tmp_path, machine):
    root, a, b = machine
    m = Fake(build_dir, tmp_path, root)
    assert m.start("--rounds", "1", a, b)[0] == 0
    _s, state = m.state()
    m.boot()
    good = state.read_text()
    state.write_text("{not json")  # a disk that lost it, a half-written copy
    r = m.hook("resume", str(state))
    assert r.returncode == 1 and "not JSON" in r.stderr
    r = m.hook("home", str(state))  # what OnFailure= (or the init script's ||) runs
    assert r.returncode == 0 and "back to the default kernel" in r.stderr
    assert m.reboots() == ["kexec", "reboot"]
    m.boot(asked=False)
    r = m.hook("home", str(state))  # in the default kernel's boot: it stays, the hook too
    assert r.returncode == 0 and "stays here" in r.stderr and m.reboots() == ["kexec", "reboot"]
    assert (root / "etc/init.d/S99kbench-campaign").exists()
    state.write_text(good)  # mended: the campaign goes on
    assert m.hook("resume", str(state)).returncode == 0
    assert m.reboots() == ["kexec", "reboot", "kexec"]


def test_stop_finds_the_campaign_through_its_hook(build_dir, tmp_path, machine):
    root, a, b = machine
    m = Fake(build_dir, tmp_path, root)
    assert m.start("--rounds", "1", a, b)[0] == 0
    m.boot()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = subprocess.run([str(build_dir / "bin" / "kbench-campaign"), "stop"], capture_output=True, text=True,
                       env=m.env, cwd=elsewhere, timeout=120)
    assert r.returncode == 0, r.stderr
    s, _ = m.state()
    assert s["status"] == "stopped" and s["hook_files"] == []
    assert not (root / "etc/init.d/S99kbench-campaign").exists()
    assert m.reboots() == ["kexec", "reboot"]  # it was in a test boot: home


def fake_watchdog(root, identity="i6300ESB timer", module="i6300esb", max_timeout="2046", stop_on_reboot="-1"):
    wd = root / "sys/class/watchdog/watchdog0"
    (wd / "device/driver").mkdir(parents=True)
    (wd / "identity").write_text(identity + "\n")
    (wd / "max_timeout").write_text(max_timeout + "\n")
    os.symlink(f"../../../../module/{module}", wd / "device/driver/module")
    (root / "sys/module/watchdog/parameters").mkdir(parents=True)
    (root / "sys/module/watchdog/parameters/stop_on_reboot").write_text(stop_on_reboot + "\n")
    (root / "sys/module/watchdog/initstate").write_text("live\n")
    (root / "dev").mkdir(exist_ok=True)
    (root / "dev/watchdog0").write_text("")


def test_the_watchdog_is_armed_across_each_kexec_and_disarmed_at_the_end(build_dir, tmp_path, machine):
    root, a, b = machine
    fake_watchdog(root)
    for rel in RELEASES.values():
        (root / "lib/modules" / rel / "modules.dep").write_text("kernel/drivers/watchdog/i6300esb.ko.xz:\n")
    m = Fake(build_dir, tmp_path, root)
    rc, out, err = m.start("--rounds", "1", "--watchdog-timeout", "200", a, b)
    assert rc == 0, err
    assert "watchdog: /dev/watchdog0 (i6300ESB timer, module i6300esb), armed across each kexec with 200 s" in out
    s, state = m.state()
    assert "watchdog.stop_on_reboot=0 watchdog.open_timeout=200" in s["kernels"][1]["cmdline"]
    log = (root / "watchdog-log").read_text().splitlines()
    # loaded at boot with the core's default: reloaded so that the kexec does not stop it, then armed
    assert log == ["modprobe -r i6300esb", "modprobe -r watchdog", "modprobe watchdog stop_on_reboot=0",
                   "modprobe i6300esb", "arm 200", "arm 200"], log
    (root / "sys/module/watchdog/parameters/stop_on_reboot").write_text("0\n")  # as the test boots have it
    for _ in range(2):
        m.boot()
        assert m.hook("resume", str(state)).returncode == 0
    assert m.state()[0]["status"] == "finished"
    assert (root / "watchdog-log").read_text().splitlines()[-1] == "disarm"
    assert (root / "dev/watchdog0").read_text().endswith("V")  # the magic close


@pytest.mark.parametrize("identity, module, max_timeout, words", [
    ("Software Watchdog", "softdog", "65535", "softdog is no hardware watchdog"),
    ("iTCO_wdt", "iTCO_wdt", "120", "its longest timeout, 120 s, is shorter"),
])
def test_a_watchdog_that_cannot_cover_a_boot_is_not_used(build_dir, tmp_path, machine, identity, module, max_timeout,
                                                         words):
    root, a, b = machine
    fake_watchdog(root, identity, module, max_timeout)
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", a, b)
    assert r.returncode == 0 and "watchdog: none (" in r.stdout and words in r.stdout
    assert "watchdog.stop_on_reboot" not in r.stdout
    r = campaign(build_dir, tmp_path, root, "start", "--dry-run", "--watchdog", module, a, b)
    assert r.returncode == 3 and words in r.stderr


FAKE_SYSTEMCTL = r"""#!/bin/sh
# a stand-in for systemctl: each call a line in DIR/systemctl-log
echo "$*" >> "$KBENCH_CAMPAIGN_FAKE_ROOT/systemctl-log"
case "$1" in
is-system-running) echo running ;;
list-units) printf 'apt-daily.timer loaded active waiting Daily apt download activities\nman-db.timer loaded active waiting Daily man-db regeneration\n' ;;
show) echo "${5%.timer}.service" ;;
is-active) echo inactive ;;
esac
"""


def test_under_systemd_a_step_waits_for_the_boot_and_its_timers(build_dir, tmp_path, machine):
    """The systemd path on the fake machine (its systemctl a stand-in): the
    unit and its home unit, the hand-over through systemd, and before each
    step is-system-running --wait and the timers stopped for the boot."""
    root, a, b = machine
    (root / "run/systemd/system").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "bin/systemctl").write_text(FAKE_SYSTEMCTL)
    (root / "bin/systemctl").chmod(0o755)
    m = Fake(build_dir, tmp_path, root)
    rc, out, err = m.start("--rounds", "1", a, b, reboots=0)
    assert rc == 0, err
    assert "journalctl -u kbench-campaign -f" in err
    s, state = m.state()
    assert s["hook_kind"] == "systemd"
    unit = (root / "etc/systemd/system/kbench-campaign.service").read_text()
    assert f'RequiresMountsFor="{state.parent}" "{m.bin_dir}"' in unit
    assert "OnFailure=kbench-campaign-home.service" in unit
    assert (root / "etc/systemd/system/kbench-campaign-home.service").exists()
    assert os.readlink(root / "etc/systemd/system/multi-user.target.wants/kbench-campaign.service") == \
        "/etc/systemd/system/kbench-campaign.service"
    log = (root / "systemctl-log").read_text().splitlines()
    assert log == ["daemon-reload", "start --no-block kbench-campaign.service"]  # handed over to systemd
    for n in range(3):  # what systemd starts at each boot
        assert m.hook("resume", str(state)).returncode == 0
        if n < 2:
            m.boot()
    s, _ = m.state()
    assert s["status"] == "finished"
    log = (root / "systemctl-log").read_text().splitlines()
    runs = [i for i, line in enumerate(log) if line == "kbench-run"]
    assert len(runs) == 2
    for first, run in zip([log.index("daemon-reload") + 2] + [r + 1 for r in runs[:-1]], runs):
        part = log[first:run]  # what came between the boot's start and its step
        assert part[0] == "is-system-running --wait", part
        assert "stop apt-daily.timer" in part and "stop man-db.timer" in part and "is-active apt-daily.service" in part
    assert "system running; 2 timers stopped for this boot" in s["steps"][0]["settle"]
    assert "logins kept off" in (state.parent / "logs/step-01-A.log").read_text()
    assert not (root / "run/nologin").exists()  # let in again at the end
    assert log[-1] == "daemon-reload" and not (root / "etc/systemd/system/kbench-campaign.service").exists()


def test_make_passes_kernel_args_and_only_with_quotes_whole(build_dir, tmp_path, machine):
    """make's recipes hand KERNEL_ARGS, ONLY and LABEL to the program through
    the environment: a quote (or a $) in them no longer breaks the shell's quoting."""
    import shlex
    root = next(p for p in [build_dir.resolve(), *build_dir.resolve().parents] if (p / "Makefile").is_file())
    exe = str(build_dir.resolve() / "bin" / "kbench-campaign")
    kernel_args = "dyndbg=\"file x.c +p\" a='b'"
    only = "^lat_syscall (null|read)$ it's"
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(root), "-o", exe, f"CAMPAIGN_BIN={exe}",
                        "vm-campaign", "DRY_RUN=1", "KERNELS=k1 k2", f"KERNEL_ARGS={kernel_args}", f"ONLY={only}",
                        "BUDGET="], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    step = next(line for line in r.stdout.splitlines() if "each step:" in line).split("each step:", 1)[1]
    argv = shlex.split(step)  # the plan's command, read back as a shell would
    assert argv[argv.index("--append") + 1] == kernel_args
    assert argv[argv.index("--only") + 1] == only


def test_a_kernel_without_the_watchdogs_driver_boots_without_it(build_dir, tmp_path, machine):
    """Debian's 6.1 cloud kernel has no i6300esb: armed, the watchdog would
    reset its boot in the middle of a step. It is disarmed before that kexec."""
    root, a, b = machine
    fake_watchdog(root)
    (root / "sys/module/watchdog/parameters/stop_on_reboot").write_text("0\n")
    (root / "lib/modules" / RELEASES["6.12"] / "modules.dep").write_text("kernel/drivers/watchdog/i6300esb.ko.xz:\n")
    m = Fake(build_dir, tmp_path, root)
    rc, out, err = m.start("--rounds", "1", b, a)  # A = 6.12 has it, B = 6.1 has not
    assert rc == 0, err
    assert "not kernel B's boots: no i6300esb in /lib/modules/6.1.0-57-cloud-amd64/" in out
    _s, state = m.state()
    m.boot()
    assert m.hook("resume", str(state)).returncode == 0  # A's step, then the kexec into B
    assert (root / "watchdog-log").read_text().splitlines() == ["arm 300", "arm 300", "arm 300", "disarm"]
    assert "has no driver for the watchdog" in (state.parent / "campaign.log").read_text()


def test_an_openrc_machine_is_refused(build_dir, tmp_path, machine):
    """OpenRC never runs /etc/init.d/S99 scripts: its hook would not run."""
    root, a, b = machine
    (root / "run/openrc").mkdir(parents=True)
    r = campaign(build_dir, tmp_path, root, "start", a, b)
    assert r.returncode == 3 and "OpenRC" in r.stderr
    assert not (root / "etc").exists() and not (root / "usr").exists()
