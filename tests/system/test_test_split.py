"""make test runs each test once: the ASan+UBSan pass takes the tests that
run something of the build (the build_dir fixture) except those under
strace and those marked plain_pass (`--build-tests-only`); the plain pass takes the rest
(`--no-asan-share`). One predicate decides both (in_the_asan_share in
tests/conftest.py). Checked on a small suite collected with the real
conftest, and on the commands the Makefile and the sanitizer pass give."""
import os
import re
import shutil
import subprocess
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS_DIR)

SUITE = '''
def test_runs_a_binary(build_dir):
    pass

def test_reads_the_makefile():
    pass

def test_strace_sees_the_calls(build_dir):
    pass

def test_strace_of_nothing_built():
    pass

def test_calls_seen_by_Strace(build_dir):
    pass

class TestStraceLike:
    def test_in_a_class_named_so(self, build_dir):
        pass

import pytest

@pytest.mark.plain_pass
def test_marked_for_the_plain_pass(build_dir):
    pass
'''
ALL = {"test_runs_a_binary", "test_reads_the_makefile", "test_strace_sees_the_calls",
       "test_strace_of_nothing_built", "test_calls_seen_by_Strace", "test_in_a_class_named_so",
       "test_marked_for_the_plain_pass"}


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "tests" / "bench").mkdir(parents=True)
    shutil.copy(os.path.join(TESTS_DIR, "conftest.py"), tmp_path / "tests")
    shutil.copy(os.path.join(TESTS_DIR, "bench", "bench_runner.py"), tmp_path / "tests" / "bench")
    (tmp_path / "tests" / "test_split.py").write_text(SUITE)
    return tmp_path


def node_ids(cwd, args):
    """(the pytest --collect-only process in cwd with args, the node ids it lists)."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider"]
                       + list(args), cwd=cwd, capture_output=True, text=True, timeout=120)
    return p, re.findall(r"^(tests/\S+::test_\w+)$", p.stdout, re.M)


def collected(suite, *args):
    p, ids = node_ids(suite, ["tests"] + list(args))
    return p, {i.split("::")[-1] for i in ids}


def test_the_two_passes_share_the_tests_out_once_each(suite):
    p, everything = collected(suite)
    assert p.returncode == 0, p.stdout + p.stderr
    assert everything == ALL
    p, asan = collected(suite, "--build-tests-only")
    assert p.returncode == 0, p.stdout + p.stderr
    p, plain = collected(suite, "--no-asan-share")
    assert p.returncode == 0, p.stdout + p.stderr
    # the test's own name decides, not its class's or its module's
    assert asan == {"test_runs_a_binary", "test_in_a_class_named_so"}
    assert plain == {"test_reads_the_makefile", "test_strace_sees_the_calls", "test_strace_of_nothing_built",
                     "test_calls_seen_by_Strace", "test_marked_for_the_plain_pass"}
    assert asan | plain == everything and not asan & plain


def test_the_two_options_together_are_refused(suite):
    p, _ = collected(suite, "--build-tests-only", "--no-asan-share")
    assert p.returncode != 0
    assert "exclude each other" in p.stdout + p.stderr
    assert "Traceback" not in p.stdout + p.stderr


def test_make_test_and_the_sanitizer_pass_use_the_split():
    with open(os.path.join(ROOT, "Makefile")) as f:
        makefile = f.read()
    recipe = makefile[makefile.index("\ntest:"):]
    recipe = recipe[:recipe.index("\n\n")]
    assert "--no-asan-share tests --ignore=tests/scripts" in recipe
    # tests/scripts in two parts that hold each of its files once
    assert '"$(PYTEST) --shard 1/2 tests/scripts"' in recipe
    assert '"$(PYTEST) --shard 2/2 tests/scripts"' in recipe
    assert "$(ASAN_PASS)" in recipe
    with open(os.path.join(ROOT, "tests", "system", "sanitizer-pass.sh")) as f:
        san = f.read()
    assert "--build-tests-only" in san and "not strace" not in san


def test_shards_hold_every_file_once_and_keep_a_file_whole(suite):
    for i in range(5):
        (suite / "tests" / f"test_more{i}.py").write_text("def test_a():\n    pass\n\ndef test_b(build_dir):\n    pass\n")
    _, ids = node_ids(suite, ["tests"])
    everything = set(ids)
    assert len(everything) == len(ALL) + 10
    parts = []
    for k in (1, 2, 3):
        p, ids = node_ids(suite, ["--shard", f"{k}/3", "tests"])
        assert p.returncode == 0, p.stdout + p.stderr
        parts.append(set(ids))
    assert all(parts) and set().union(*parts) == everything and sum(map(len, parts)) == len(everything)
    for part in parts:  # a file's tests are all in one part
        files = {t.split("::")[0] for t in part}
        assert all(t.split("::")[0] not in files for other in parts if other is not part for t in other)
    # with the pass's own option: the same split of its share
    p, _ = node_ids(suite, ["--shard", "1/2", "--no-asan-share", "tests"])
    assert p.returncode == 0 and "test_b" not in p.stdout, p.stdout + p.stderr


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x", "1/0", "1-2"])
def test_a_bad_shard_is_a_usage_error(suite, bad):
    p, _ = collected(suite, "--shard", bad)
    assert p.returncode == 4, p.stdout + p.stderr  # pytest's usage error
    assert "expected K/N" in p.stdout + p.stderr and "Traceback" not in p.stdout + p.stderr


def test_the_asan_pass_parts_hold_every_test_but_the_scripts_once(tmp_path):
    """tests/parallel.py's PYTEST_PARTS: every test outside tests/scripts in
    exactly one part, a new file or directory included."""
    sys.path.insert(0, TESTS_DIR)
    try:
        from parallel import PYTEST_PARTS
    finally:
        sys.path.remove(TESTS_DIR)
    files = ["bench/test_smoke.py", "bench/test_ipc.py", "harness/test_counters.py", "driver/test_driver.py",
             "driver/test_quick.py", "system/test_faults.py", "scripts/test_kb_stats.py", "test_top.py",
             "newdir/test_new.py"]
    for f in files:
        path = tmp_path / "tests" / f
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("def test_it():\n    pass\n")
    everything = {"tests/" + f + "::test_it" for f in files if not f.startswith("scripts/")}
    seen = []
    for part in PYTEST_PARTS:
        p, ids = node_ids(tmp_path, part)
        assert p.returncode in (0, 5), p.stdout + p.stderr  # 5: a part that collects nothing here
        seen += ids
    assert sorted(seen) == sorted(everything)
