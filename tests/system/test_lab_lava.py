"""The LAVA files (scripts/lab/lava, issue 28) without a dispatcher: the
test definition and the job template are what LAVA reads (every step a
string, the parameters), the definition's steps run as LAVA's run.sh runs
them (set -e, parameters as shell variables) on a fake suite and send the
run back on the console, and kbench-lava-fetch takes it and LAVA's results
out of a log. The real dispatcher: make test-lava (lava_check.py)."""
import json
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAB = ROOT / "scripts" / "lab" / "lava"
FETCH = LAB / "kbench-lava-fetch"
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
