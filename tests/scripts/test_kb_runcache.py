"""The cache of runs already read (model/runcache.py): a run read again
from it is the run as read from its files, its warnings said again; a
changed run, changed code or a damaged entry is read afresh; off, it
writes nothing; the commands print the same bytes with it and without."""
import os
import pickle
import re
import subprocess
import sys
import time
import zlib

import pytest

from kb_helpers import HERE
from kbench.model import compare, judge, load, runcache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("KBENCH_CACHE", str(d))
    monkeypatch.setenv("KBENCH_JOBS", "1")        # the reads in this process: counted
    return d


@pytest.fixture
def reads(monkeypatch):
    """The run directories load_run read from their files."""
    seen = []
    real = load.load_run

    def counting(path, warn):
        seen.append(path)
        return real(path, warn)
    monkeypatch.setattr(load, "load_run", counting)
    return seen


def read(paths):
    w = load.Warnings()
    return load.load_runs(paths, w), w.messages


def reps(run):
    return {n: (c.metric, c.control, sorted(c.reps.items()), sorted(c.rep_start.items()), c.declared)
            for n, c in run.cases.items()}


def test_a_run_read_again_comes_from_the_cache(cache, reads, base_run):
    first, said = read([base_run])
    assert len(reads) == 1 and said == []
    entries = sorted(p.suffix for p in cache.iterdir())
    assert entries == [".run"]
    again, said = read([base_run])
    assert len(reads) == 1 and said == []       # not read from its files again
    assert reps(again[0]) == reps(first[0]) and again[0].invocations == first[0].invocations
    assert (again[0].run_id, again[0].kernel, again[0].host, again[0].path) == \
           (first[0].run_id, first[0].kernel, first[0].host, first[0].path)


def test_a_run_named_another_way_is_the_same_run(cache, reads, base_run, monkeypatch):
    """make run's table names its run results/HOST/KERNEL/RUN, the report
    finds it under the repository's absolute results/: one entry."""
    monkeypatch.chdir(base_run.parent)
    first, _ = read([base_run])
    again, said = read([base_run.name])          # relative
    assert len(reads) == 1 and said == [] and str(again[0].path) == base_run.name
    assert again[0].run_id == first[0].run_id and reps(again[0]) == reps(first[0])
    with open(base_run / "samples.jsonl", "a") as f:
        f.write("{not json\n")
    _, said = read([base_run])
    _, said_rel = read([base_run.name])          # its warning names the run as named now
    assert len(reads) == 3 and said_rel == [m.replace(str(base_run), base_run.name) for m in said]
    assert said_rel[0].startswith(base_run.name)


def test_a_changed_file_is_read_again_even_within_a_clock_tick(cache, reads, base_run):
    p = base_run / "samples.jsonl"
    text = p.read_text()
    first, _ = read([base_run])
    before = sorted(v for vs in first[0].cases["lat_syscall null"].rep_arrays() for v in vs)
    mark = '"case":"lat_syscall null"'
    at = text.index('"ns_per_op":', text.index(mark)) + len('"ns_per_op":')
    other = "9" if text[at] != "9" else "8"
    st = p.stat()
    p.write_text(text[:at] + other + text[at + 1:])            # same length, same inode
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))          # and the same time: only the bytes differ
    assert p.stat().st_size == st.st_size and p.stat().st_ino == st.st_ino
    again, _ = read([base_run])
    assert len(reads) == 2
    after = sorted(v for vs in again[0].cases["lat_syscall null"].rep_arrays() for v in vs)
    assert after != before and len(after) == len(before)


def test_warnings_are_said_again(cache, reads, base_run):
    with open(base_run / "samples.jsonl", "a") as f:
        f.write("{not json\n")
    _, said = read([base_run])
    assert len(said) == 1 and "samples.jsonl" in said[0]
    _, again = read([base_run])
    assert len(reads) == 1 and again == said


def test_off_writes_nothing_and_reads_every_time(tmp_path, monkeypatch, reads, base_run):
    monkeypatch.setenv("KBENCH_JOBS", "1")
    for off in ("off", "0", "no"):
        monkeypatch.setenv("KBENCH_CACHE", off)
        read([base_run])
    assert len(reads) == 3
    assert runcache.directory() is None
    monkeypatch.delenv("KBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert runcache.directory() == tmp_path / "xdg" / "kbench" / "runs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert runcache.directory() == tmp_path / "home" / ".cache" / "kbench" / "runs"


def test_a_damaged_entry_is_read_again_and_replaced(cache, reads, base_run):
    first, _ = read([base_run])
    (entry,) = cache.iterdir()
    entry.write_bytes(entry.read_bytes()[:100])
    again, said = read([base_run])
    assert len(reads) == 2 and said == [] and reps(again[0]) == reps(first[0])
    read([base_run])
    assert len(reads) == 2                      # the new entry serves


def test_another_format_or_code_is_not_used(cache, reads, base_run, monkeypatch):
    read([base_run])
    monkeypatch.setattr(runcache, "FORMAT", runcache.FORMAT + 1)
    read([base_run])
    assert len(reads) == 2
    monkeypatch.setattr(runcache, "_CODE", ["other code"])
    read([base_run])
    assert len(reads) == 3


def test_a_cache_of_another_user_is_not_used(cache, reads, base_run, monkeypatch):
    cache.mkdir()
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)
    read([base_run])
    read([base_run])
    assert len(reads) == 2 and list(cache.iterdir()) == []


def test_a_cache_others_may_write_in_is_not_used(cache, reads, base_run):
    cache.mkdir()
    os.chmod(cache, 0o777)          # as /tmp: another user could plant an entry
    read([base_run])
    read([base_run])
    assert len(reads) == 2 and list(cache.iterdir()) == []
    os.chmod(cache, 0o755)
    read([base_run])
    read([base_run])
    assert len(reads) == 3


def test_a_run_that_changes_while_read_is_not_kept(cache, base_run, monkeypatch):
    real = load.load_run

    def growing(path, warn):
        run = real(path, warn)
        with open(path / "samples.jsonl", "a") as f:      # the driver still writing it
            f.write("\n")
        return run
    monkeypatch.setattr(load, "load_run", growing)
    read([base_run])
    assert list(cache.iterdir()) == []


def test_the_least_recently_used_entries_go_first(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    for i, name in enumerate(["old.run", "mid.est", "new.run"]):
        (d / name).write_bytes(b"x" * 1000)
        os.utime(d / name, ns=(i * 10**9, i * 10**9))
    (d / "other").write_bytes(b"x" * 5000)             # not an entry: left alone
    for name, age in ((".a.1.tmp", 7200), (".b.2.tmp", 60)):     # writes cut short; one may be going on
        (d / name).write_bytes(b"x")
        os.utime(d / name, (time.time() - age, time.time() - age))
    runcache.prune(d, limit=2000)
    assert sorted(p.name for p in d.iterdir()) == [".b.2.tmp", "mid.est", "new.run", "other"]


def test_estimates_come_back_only_for_the_same_side_and_options(cache, base_run, monkeypatch):
    made = []
    real = judge._estimates

    def counting(series, side, opts):
        made.append(side)
        return real(series, side, opts)
    monkeypatch.setattr(judge, "_estimates", counting)
    opts = compare.Options(n_boot=200)
    (run,), _ = read([base_run])
    first = compare.run_estimates(run, opts)
    (run,), _ = read([base_run])
    assert compare.run_estimates(run, opts) == first and len(made) == 1
    (run,), _ = read([base_run])
    run.kernel += "~abcdef"                             # grouped under another name: seeded by it
    compare.run_estimates(run, opts)
    (run,), _ = read([base_run])
    compare.run_estimates(run, compare.Options(n_boot=200, seed=2))
    assert len(made) == 3 and made[1] != made[0]
    (run,), _ = read([base_run])
    assert compare.run_estimates(run, opts) == first and len(made) == 3      # both kept beside the run


SCRIPTS = HERE.parents[1] / "scripts"


def _compare(env, base, new):
    r = subprocess.run([sys.executable, str(SCRIPTS / "compare"), "--csv", "-", str(base), str(new)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


def test_compare_prints_the_same_bytes_with_the_cache_and_without(tmp_path, fixture_runs):
    env = dict(os.environ, KBENCH_CACHE="off")
    want = _compare(env, *fixture_runs)
    env["KBENCH_CACHE"] = str(tmp_path / "c")
    assert _compare(env, *fixture_runs) == want         # the runs read and kept
    assert len(list((tmp_path / "c").glob("*.run"))) == 2 and list((tmp_path / "c").glob("*.est"))
    assert _compare(env, *fixture_runs) == want         # the runs and their estimates from the cache


def test_an_entry_holds_no_more_than_the_run_as_read(cache, base_run):
    read([base_run])
    (entry,) = cache.iterdir()
    fmt, (run, said, named) = pickle.loads(zlib.decompress(entry.read_bytes()))
    assert fmt == runcache.FORMAT and said == [] and named == str(base_run)
    assert "_kbench_cache" not in run.__dict__ and "_kbench_estimates" not in run.__dict__


def _report(env, out, runs):
    r = subprocess.run([sys.executable, str(SCRIPTS / "report"), "--no-samples", "--out", str(out), str(runs)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return re.sub(r"Generated [^<]*\.", "Generated.", out.read_text()), r.stdout.replace(str(out), "PAGE")


def test_the_page_is_the_same_with_the_cache_and_without(tmp_path, fixture_runs):
    runs = fixture_runs[0].parent
    env = dict(os.environ, KBENCH_CACHE="off")
    want = _report(env, tmp_path / "off.html", runs)
    env["KBENCH_CACHE"] = str(tmp_path / "c")
    assert _report(env, tmp_path / "cold.html", runs) == want
    assert _report(env, tmp_path / "warm.html", runs) == want
