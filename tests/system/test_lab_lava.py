"""The LAVA files (scripts/lab/lava, issue 28) without a dispatcher: the
test definition and the job template are what LAVA reads (every step a
string, the parameters), the definition's steps run as LAVA's run.sh runs
them (set -e, parameters as shell variables) on a fake suite and send the
run back on the console, and kbench-lava-fetch takes it and LAVA's results
out of a log; lava-local's choice of accelerator (vm-run's KVM probe) with
a fake LAVA and a fake QEMU. The real dispatcher: make test-lava
(lava_check.py)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from test_vm_run import FAKE_QEMU, fake_deb, fake_static  # noqa: F401  (fake_static: a fixture)

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAB = ROOT / "scripts" / "lab" / "lava"
FETCH = LAB / "kbench-lava-fetch"
LAVA_LOCAL = LAB / "lava-local"
RUN_ID = "20260101T000000Z-abcdef"


def test_the_definition_and_the_job_template():
    d = yaml.safe_load((LAB / "kbench.yaml").read_text())
    assert d["metadata"]["format"] == "Lava-Test Test Definition 1.0" and d["metadata"]["name"] == "kbench"
    assert {"KBENCH_DIR", "KBENCH_URL", "ONLY", "BUDGET", "QUICK", "EXTRA_ARGS", "OUT", "SEND_RUN"} <= set(d["params"])
    assert all(isinstance(s, str) for s in d["run"]["steps"]), d["run"]["steps"]
    job = yaml.safe_load((LAB / "kbench-qemu-job.yaml").read_text())
    deploy, boot, test = (next(a[k] for a in job["actions"] if k in a) for k in ("deploy", "boot", "test"))
    assert deploy["to"] == "tmpfs" and deploy["images"]["initrd"]["overlays"]["lava"] is True
    assert deploy["images"]["initrd"]["overlays"]["kbench"]["path"] == "/kbench"
    assert boot["method"] == "qemu" and boot["prompts"] == ["/ # "]
    assert test["definitions"][0]["path"] == "scripts/lab/lava/kbench.yaml"
    device = yaml.safe_load((LAB / "qemu-device.yaml").read_text())
    assert {"constants", "parameters", "actions", "timeouts"} <= set(device)


def test_the_aarch64_job_is_the_x86_job_for_an_arm64_guest():
    """kbench-qemu-aarch64-job.yaml (issue 31): the same actions, overlay and
    test definition as the x86_64 template, for LAVA's qemu device type with
    arch arm64 on the virt machine, its console on the PL011 (ttyAMA0), a
    quick run marked emulated; its device description runs
    qemu-system-aarch64 -M virt."""
    x86 = yaml.safe_load((LAB / "kbench-qemu-job.yaml").read_text())
    arm = yaml.safe_load((LAB / "kbench-qemu-aarch64-job.yaml").read_text())
    assert arm["device_type"] == "qemu" and arm["context"]["arch"] == "arm64" and arm["context"]["machine"] == "virt"
    assert [list(a) for a in arm["actions"]] == [list(a) for a in x86["actions"]] == [["deploy"], ["boot"], ["test"]]
    deploy, boot, test = (next(a[k] for a in arm["actions"] if k in a) for k in ("deploy", "boot", "test"))
    x86_deploy = next(a["deploy"] for a in x86["actions"] if "deploy" in a)
    assert deploy["images"]["initrd"]["overlays"] == {
        k: dict(v, url=deploy["images"]["initrd"]["overlays"][k]["url"]) if isinstance(v, dict) else v
        for k, v in x86_deploy["images"]["initrd"]["overlays"].items()}
    assert "console=ttyAMA0" in deploy["images"]["kernel"]["image_arg"]
    assert "arm64" in deploy["images"]["kernel"]["url"] and "arm64" in deploy["images"]["initrd"]["overlays"]["kbench"]["url"]
    assert boot["method"] == "qemu" and boot["prompts"] == ["/ # "]
    params = test["definitions"][0]["parameters"]
    assert test["definitions"][0]["path"] == "scripts/lab/lava/kbench.yaml"
    definition = yaml.safe_load((LAB / "kbench.yaml").read_text())
    assert set(params) <= set(definition["params"]) and params["QUICK"] == "true" and params["VIRT"] == "emulated"
    device = yaml.safe_load((LAB / "qemu-aarch64-device.yaml").read_text())
    qemu = device["actions"]["boot"]["methods"]["qemu"]["parameters"]
    assert qemu["command"] == "qemu-system-aarch64" and "-M virt" in qemu["options"]
    assert qemu["boot_options"]["console"].startswith("ttyAMA0") and device["available_architectures"] == ["arm64"]


def fake_suite(tmp_path):
    """A kbench-run that writes a complete run under --out, prints a LAVA
    signal and its run directory, and exits 1 (a case failed)."""
    suite = tmp_path / "suite"
    (suite / "bin").mkdir(parents=True)
    (suite / "bin" / "kbench-run").write_text(f"""#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
d=$out/lava-qemu/6.1.0-test/{RUN_ID}
mkdir -p $d
echo '{{"status": "complete", "run_id": "{RUN_ID}"}}' > $d/meta.json
echo '{{"case": "lat_syscall null", "rep_idx": 0, "ns_per_op": 90}}' > $d/samples.jsonl
: > $d/runs.jsonl
echo '<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=lat_syscall.null RESULT=pass MEASUREMENT=90.0000 UNITS=ns/op>'
echo $d
exit 1
""")
    (suite / "bin" / "kbench-run").chmod(0o755)
    fakes = tmp_path / "fakes"
    fakes.mkdir()
    (fakes / "dmesg").write_text("#!/bin/sh\nexit 0\n")        # never the machine's console level
    (fakes / "dmesg").chmod(0o755)
    return suite, fakes


def run_steps(tmp_path, suite, fakes, **params):
    """The definition's steps as LAVA's run.sh runs them: its parameters,
    then the job's, as shell variables; set -e.  TMPDIR is tmp_path, so
    that the steps' scratch files are the test's, never the host's /tmp."""
    d = yaml.safe_load((LAB / "kbench.yaml").read_text())
    values = dict(d["params"], KBENCH_DIR=str(suite), OUT=str(tmp_path / "out"), **params)
    script = ("".join(f"{k}='{v or ''}'\n" for k, v in values.items()) + "set -e\nset -x\n"
              + "\n".join(d["run"]["steps"]) + "\n")
    # stderr (the -x trace) in the output, as both are on a console.
    return subprocess.run(["/bin/sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60, env={"PATH": f"{fakes}:/usr/bin:/bin", "TMPDIR": str(tmp_path)})


def test_the_steps_send_the_run_back_and_fetch_keeps_it(tmp_path):
    suite, fakes = fake_suite(tmp_path)
    r = run_steps(tmp_path, suite, fakes)
    assert r.returncode == 0, r.stdout                    # kbench-run's 1 does not stop the script
    lines = r.stdout.splitlines()
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=lat_syscall.null RESULT=pass MEASUREMENT=90.0000 UNITS=ns/op>" in lines
    assert "kbench-run exit status 1" in lines
    assert "+ echo KBENCH-DATA-BEGIN" in lines and f"+ base64 {tmp_path}/kbench-run.tgz" in lines   # traces, not data
    assert not (tmp_path / "kbench-run.tgz").exists()      # the archive, in $TMPDIR, removed once sent
    end = [i for i, ln in enumerate(lines) if ln.startswith("KBENCH-DATA-END ")]
    assert "KBENCH-DATA-BEGIN" in lines and len(end) == 1
    assert lines[end[0] + 1:] == [f"+ rm -f {tmp_path}/kbench-run.tgz"]    # then only the archive's removal
    # The console as lava-run logs it: one JSON object a line, the shell's
    # trace of the markers too.
    entries = [{"dt": "t", "lvl": "target", "msg": "+ echo KBENCH-DATA-BEGIN"}]
    entries += [{"dt": "t", "lvl": "target", "msg": ln + "\r"} for ln in lines]
    entries += [{"dt": "t", "lvl": "results", "msg": {"case": "lat_syscall.null", "definition": "0_kbench",
                                                       "result": "pass", "measurement": "90.0000",
                                                       "units": "ns/op", "set": "lat_syscall"}},
                {"dt": "t", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}}]
    log = tmp_path / "job.log"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    out = tmp_path / "results"
    f = subprocess.run([sys.executable, str(FETCH), str(log), "--out", str(out), "--results", str(tmp_path / "r.json")],
                       capture_output=True, text=True, timeout=60)
    assert f.returncode == 0, f.stderr
    run = out / "lava-qemu" / "6.1.0-test" / RUN_ID
    assert f.stdout == f"{run}\n"
    assert sorted(p.name for p in run.iterdir()) == ["meta.json", "runs.jsonl", "samples.jsonl"]
    assert [p.name for p in out.iterdir()] == ["lava-qemu"]          # no staging left
    assert json.loads((tmp_path / "r.json").read_text()) == [
        {"case": "lat_syscall.null", "definition": "0_kbench", "result": "pass", "measurement": 90.0,
         "units": "ns/op", "set": "lat_syscall"},
        {"case": "job", "definition": "lava", "result": "pass", "measurement": None, "units": None, "set": None}]
    # The same run again: it is there already.
    f = subprocess.run([sys.executable, str(FETCH), str(log), "--out", str(out)], capture_output=True, text=True,
                       timeout=60)
    assert f.returncode == 1 and "exists already" in f.stderr and "Traceback" not in f.stderr


def test_fetch_refuses_a_damaged_transfer(tmp_path):
    suite, fakes = fake_suite(tmp_path)
    lines = run_steps(tmp_path, suite, fakes).stdout.splitlines()
    i = lines.index(f"+ base64 {tmp_path}/kbench-run.tgz") + 1            # the first line of data
    lines[i] = lines[i][:-4] + ("AAAA" if not lines[i].endswith("AAAA") else "BBBB")
    (tmp_path / "console.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "results"
    f = subprocess.run([sys.executable, str(FETCH), str(tmp_path / "console.txt"), "--out", str(out)],
                       capture_output=True, text=True, timeout=60)
    assert f.returncode == 1 and "the transfer is corrupt" in f.stderr, f.stderr
    assert list(out.iterdir()) == []
    (tmp_path / "again").mkdir()
    r = run_steps(tmp_path / "again", suite, fakes, SEND_RUN="none")
    assert r.returncode == 0 and "KBENCH-DATA-BEGIN" not in r.stdout


# ---------------------------------------------------------------- lava-local's accelerator

def lava_local(tmp_path, fake_static, kvm, *args):
    """lava-local on a fake kernel package with a fake QEMU (FAKE_QEMU_KVM:
    what its -accel kvm does) and a fake lava-run (it runs nothing, so no
    run comes back: exit 1) first on PATH, where LAVA finds them too."""
    fakes = tmp_path / "bin"
    fakes.mkdir()
    (fakes / "qemu-system-x86_64").symlink_to(FAKE_QEMU)
    (fakes / "lava-run").write_text("#!/bin/sh\necho fake lava-run\n")
    (fakes / "lava-run").chmod(0o755)
    log = tmp_path / "qemu-args.log"
    env = dict(os.environ, PATH=f"{fakes}:{os.environ['PATH']}", FAKE_QEMU_KVM=kvm, FAKE_QEMU_LOG=str(log))
    env.pop("KBENCH_VM_QEMU", None)
    work = tmp_path / "work"
    r = subprocess.run([sys.executable, str(LAVA_LOCAL), "--kernel", str(fake_deb(tmp_path)), "--static",
                        str(fake_static), "--work", str(work), "--out", str(tmp_path / "results"), *args],
                       capture_output=True, text=True, timeout=60, env=env)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r, work, calls


def job_accel(work):
    """The accelerator of LAVA's QEMU (the device's options) and the job's VIRT."""
    options = yaml.safe_load((work / "device.yaml").read_text())["actions"]["boot"]["methods"]["qemu"]["parameters"]
    job = yaml.safe_load((work / "job.yaml").read_text())
    test = next(a["test"] for a in job["actions"] if "test" in a)
    return options["options"][-1], test["definitions"][0]["parameters"]["VIRT"]


@pytest.mark.parametrize("kvm,why", [
    ("internal-error", "KVM internal error. Suberror: 1 (emulation failure)"),     # /dev/kvm opens, no guest runs
    ("missing", "qemu-system-x86_64: -accel kvm: failed to initialize kvm: No such file or directory"),
])
def test_lava_local_falls_back_to_emulation_where_kvm_runs_no_guest(tmp_path, fake_static, kvm, why):
    """Issue 44: /dev/kvm readable and writable was taken for KVM; on a
    nested host the guest died at once and LAVA waited out its login
    timeout. The probe guest of make vm-run decides, and the fall-back to
    emulation is said on stderr."""
    r, work, calls = lava_local(tmp_path, fake_static, kvm)
    assert [c[c.index("-accel") + 1] for c in calls] == ["kvm"]          # the probe; LAVA's QEMU is its own
    assert os.path.basename(calls[0][calls[0].index("-initrd") + 1]) == "probe.cpio.gz"
    assert f"lava-local: KVM probe: {why}\n" in r.stderr
    assert ("lava-local: KVM cannot run 6.9.0-fake here: the job runs under emulation (QEMU TCG), slower, "
            "its timings not comparable with native runs\n") in r.stderr
    assert "lava-local: lava-run (QEMU TCG, emulated)" in r.stderr
    assert job_accel(work) == ("-accel tcg -cpu max", "emulated")
    assert r.returncode == 1 and "no KBENCH-DATA-BEGIN line" in r.stderr      # the fake LAVA sent no run
    assert "Traceback" not in r.stderr


def test_lava_local_takes_kvm_where_the_probe_runs(tmp_path, fake_static):
    r, work, calls = lava_local(tmp_path, fake_static, "ok")
    assert len(calls) == 1 and "KVM probe" not in r.stderr and "KVM cannot run" not in r.stderr
    assert "lava-local: lava-run (KVM)" in r.stderr
    assert job_accel(work) == ("-accel kvm -cpu host", "kvm")


def test_lava_local_accel_kvm_or_tcg(tmp_path, fake_static):
    """--accel kvm: only where the probe's guest runs (else exit 1 before
    LAVA starts); --accel tcg: no probe."""
    (tmp_path / "kvm").mkdir()
    r, work, calls = lava_local(tmp_path / "kvm", fake_static, "internal-error", "--accel", "kvm")
    assert r.returncode == 1, r.stderr
    assert "lava-local: error: KVM cannot run this kernel here: KVM internal error. Suberror: 1" in r.stderr
    assert len(calls) == 1 and not (work / "lava.log").exists() and "Traceback" not in r.stderr
    (tmp_path / "tcg").mkdir()
    r, work, calls = lava_local(tmp_path / "tcg", fake_static, "internal-error", "--accel", "tcg")
    assert calls == [] and "KVM" not in r.stderr
    assert job_accel(work) == ("-accel tcg -cpu max", "emulated")
