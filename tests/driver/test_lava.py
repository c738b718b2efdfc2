"""kbench-run --lava (issue 28): every case as a LAVA test case, a test set
per benchmark, through LAVA's helpers when they are on PATH, else their
signal lines on stdout. On the fake benchmarks (exact values: fake_good's
rep r takes 2 + r ns) and on a quick subset of the real suite. The real
dispatcher reading them: make test-lava (tests/system/lava_check.py)."""
import os
import pathlib
import re

from driver_runner import FAKES, run_driver

SIGNAL = re.compile(r"<LAVA_SIGNAL_(\w+) ([^>]*)>")
VALID_ID = re.compile(r"[A-Za-z0-9_.+-]+")
UNITS = {"ns/op", "MB/s"}
# Every fake but fake_hang (it would wait for the timeout).
FAST_FAKES = "^fake_(good|fail|skip|crash) "


def parse(stdout):
    """(events, reasons, run dir): events in order, ("start", set),
    ("stop",), ("case", {id, result, measurement, units}); reasons by id."""
    lines = stdout.splitlines()
    events, reasons = [], {}
    for line in lines[:-1]:
        m = SIGNAL.fullmatch(line)
        if m and m.group(1) == "TESTSET":
            words = m.group(2).split()
            events.append(("start", words[1]) if words[0] == "START" else ("stop",))
            assert words[0] in ("START", "STOP") and len(words) == (2 if words[0] == "START" else 1), line
        elif m and m.group(1) == "TESTCASE":
            fields = dict(w.split("=", 1) for w in m.group(2).split())
            events.append(("case", {k.lower(): v for k, v in fields.items()}))
        else:
            m = re.fullmatch(r"kbench-run: lava: (\S+): (fail|skip): (.+)", line)
            assert m, f"unexpected stdout line: {line!r}"
            reasons[m.group(1)] = (m.group(2), m.group(3))
    return events, reasons, pathlib.Path(lines[-1])


def check_well_formed(events):
    """Sets balanced and never nested, every case inside one, ids valid and
    unique, a pass has a numeric measurement and a unit; returns
    {id: (set, case fields)}."""
    cases, current, seen_sets = {}, None, []
    for ev in events:
        if ev[0] == "start":
            assert current is None, f"set {ev[1]} started inside {current}"
            current = ev[1]
            assert current not in seen_sets, f"set {current} twice"
            seen_sets.append(current)
        elif ev[0] == "stop":
            assert current is not None, "a stop without a start"
            current = None
        else:
            c = ev[1]
            assert current is not None, f"{c} outside a set"
            assert VALID_ID.fullmatch(c["test_case_id"]), c
            assert c["test_case_id"] not in cases, f"duplicate id {c['test_case_id']}"
            assert c["result"] in ("pass", "fail", "skip"), c
            if c["result"] == "pass":
                assert float(c["measurement"]) > 0 and c["units"] in UNITS, c
                assert re.fullmatch(r"[0-9]+(\.[0-9]+)?", c["measurement"]), c
            else:
                assert "measurement" not in c and "units" not in c, c
            cases[c["test_case_id"]] = (current, c)
    assert current is None, f"set {current} never stopped"
    return cases


def test_signals_without_the_helpers(driver, tmp_path):
    r = run_driver(driver, "--lava", "--reps", "2", "--no-controls", "--only", FAST_FAKES,
                   "--out", tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 1, r.stderr                     # some cases failed
    events, reasons, run_dir = parse(r.stdout)
    assert (run_dir / "meta.json").is_file()                # the run directory, still the last line
    cases = check_well_formed(events)
    assert {k: (s, c["result"], c.get("measurement"), c.get("units")) for k, (s, c) in cases.items()} == {
        "fake_crash.null": ("fake_crash", "fail", None, None),
        "fake_fail.open": ("fake_fail", "fail", None, None),
        # medians of rep 0 (2 ns) and rep 1 (3 ns); 64 bytes per op
        "fake_good.a": ("fake_good", "pass", "2.50000", "ns/op"),
        "fake_good.b.size-64": ("fake_good", "pass", "26666.7", "MB/s"),
        "fake_skip.raw": ("fake_skip", "skip", None, None),
    }
    assert reasons == {
        "fake_crash.null": ("fail", "killed by signal 11 (Segmentation fault)"),
        "fake_fail.open": ("fail", "exit 1: fake_fail: open /nonexistent/file: No such file or directory"),
        "fake_skip.raw": ("skip", "needs root"),
    }
    assert "kbench-run: lava: 5 test cases reported" in r.stderr


def fake_helpers(tmp_path, fail=False):
    """lava-test-case and lava-test-set that log their arguments (one call
    a line, words tab-separated) and print what LAVA's print."""
    bin_ = tmp_path / "lava-bin"
    bin_.mkdir()
    log = tmp_path / "helpers.log"
    for name, body in (("lava-test-case", 'echo "helper-case $1"'), ("lava-test-set", 'echo "helper-set $1"')):
        (bin_ / name).write_text("#!/bin/sh\n"
                                 f"(printf '%s' {name}; for a in \"$@\"; do printf '\\t%s' \"$a\"; done; echo) >> {log}\n"
                                 f"{body}\n" + ("exit 3\n" if fail else ""))
        (bin_ / name).chmod(0o755)
    return bin_, log


def test_through_the_helpers_on_path(driver, tmp_path):
    bin_, log = fake_helpers(tmp_path)
    r = run_driver(driver, "--lava", "--reps", "2", "--no-controls", "--only", "^fake_(good|fail) ",
                   "--out", tmp_path / "out", env={"PATH": f"{bin_}:/usr/bin:/bin"})
    assert r.returncode == 1, r.stderr
    calls = [line.split("\t") for line in log.read_text().splitlines()]
    assert calls == [
        ["lava-test-set", "start", "fake_fail"],
        ["lava-test-case", "fake_fail.open", "--result", "fail"],
        ["lava-test-set", "stop"],
        ["lava-test-set", "start", "fake_good"],
        ["lava-test-case", "fake_good.a", "--result", "pass", "--measurement", "2.50000", "--units", "ns/op"],
        ["lava-test-case", "fake_good.b.size-64", "--result", "pass", "--measurement", "26666.7",
         "--units", "MB/s"],
        ["lava-test-set", "stop"],
    ]
    # The helpers' own output passes through; no signal line of ours.
    out = r.stdout.splitlines()
    assert "<LAVA_SIGNAL" not in r.stdout
    assert out[:3] == ["helper-set start", "kbench-run: lava: fake_fail.open: fail: exit 1: fake_fail: "
                       "open /nonexistent/file: No such file or directory", "helper-case fake_fail.open"]
    assert pathlib.Path(out[-1]).is_dir()


def test_a_failing_helper_falls_back_to_the_signal(driver, tmp_path):
    bin_, log = fake_helpers(tmp_path, fail=True)
    r = run_driver(driver, "--lava", "--reps", "1", "--no-controls", "--only", "^fake_good a",
                   "--out", tmp_path / "out", env={"PATH": f"{bin_}:/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert len(log.read_text().splitlines()) == 3
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=fake_good.a RESULT=pass MEASUREMENT=2.00000 UNITS=ns/op>" \
        in r.stdout.splitlines()
    assert f"kbench-run: warning: {bin_}/lava-test-case failed (exit 3): the signal instead" in r.stderr


def test_clashing_names_are_made_unique(driver, tmp_path):
    """Two cases whose names map to one id, and a binary whose --list fails."""
    bins = tmp_path / "bin"
    bins.mkdir()
    (bins / "fake_clash").write_text(
        "#!/bin/sh\n"
        "if [ \"$1\" = --list ]; then\n"
        "  echo '{\"bench\":\"fake_clash\",\"variant\":\"v\",\"params\":\"a=1\",\"placement\":\"unpinned\","
        "\"case\":\"fake_clash v a=1\",\"metric\":\"latency\",\"args\":[\"v\",\"--param\",\"a=1\"]}'\n"
        "  echo '{\"bench\":\"fake_clash\",\"variant\":\"v\",\"params\":\"a-1\",\"placement\":\"unpinned\","
        "\"case\":\"fake_clash v a-1\",\"metric\":\"latency\",\"args\":[\"v\",\"--param\",\"a-1\"]}'\n"
        "  exit 0\nfi\n"
        "echo 'fake_clash: skipped: no such thing here' >&2\nexit 77\n")
    (bins / "fake_clash").chmod(0o755)
    (bins / "fake_badlist").write_text("#!/bin/sh\necho 'fake_badlist: cannot list' >&2\nexit 1\n")
    (bins / "fake_badlist").chmod(0o755)
    r = run_driver(driver, "--lava", "--reps", "1", "--no-controls", "--out", tmp_path / "out",
                   bin_dir=bins, env={"PATH": "/usr/bin:/bin"})
    events, reasons, _ = parse(r.stdout)
    cases = check_well_formed(events)
    assert {k: c["result"] for k, (_, c) in cases.items()} == {
        "fake_clash.v.a-1": "skip", "fake_clash.v.a-1.2": "skip", "fake_badlist.list": "fail"}
    assert reasons["fake_clash.v.a-1"] == ("skip", "no such thing here")
    assert reasons["fake_badlist.list"][1].startswith("fake_badlist --list: failed")


def test_a_quick_subset_of_the_suite(driver, tmp_path):
    only = "^(lat_syscall (null|read)|lat_pipe rt @same|lat_udp rt family=ipv4,size=1 @same|bw_pipe stream .* @same)$"
    r = run_driver(driver, "--lava", "--quick", "--reps", "1", "--no-controls", "--only", only,
                   "--out", tmp_path, bin_dir=None, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    events, reasons, run_dir = parse(r.stdout)
    cases = check_well_formed(events)
    assert {k: (s, c["result"], c["units"]) for k, (s, c) in cases.items()} == {
        "bw_pipe.stream.chunk_kb-64.same": ("bw_pipe", "pass", "MB/s"),
        "lat_pipe.rt.same": ("lat_pipe", "pass", "ns/op"),
        "lat_syscall.null": ("lat_syscall", "pass", "ns/op"),
        "lat_syscall.read": ("lat_syscall", "pass", "ns/op"),
        "lat_udp.rt.family-ipv4.size-1.same": ("lat_udp", "pass", "ns/op"),
    }
    assert reasons == {}
    assert os.path.isfile(run_dir / "samples.jsonl.gz")
