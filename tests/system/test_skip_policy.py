"""The skip policy of tests/conftest.py (MAY_SKIP): a skip fails the run
when the test is not listed there, or when this machine has what the
listed test needs; otherwise the run passes and says why each test skipped.
Checked on a small test file run with the real conftest, in a subprocess."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT_CONFTEST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "conftest.py")

TESTS = '''
import pytest

def test_ok():
    pass

def test_pair_cross():
    pytest.skip("one CPU: no cross-CPU placement")

def test_unlisted():
    pytest.skip("no reason this machine lacks")
'''


@pytest.fixture
def suite(tmp_path):
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT_CONFTEST, tmp_path / "tests" / "conftest.py")
    # the conftest's own import: the bench tests' runner
    (tmp_path / "tests" / "bench").mkdir()
    shutil.copy(os.path.join(os.path.dirname(ROOT_CONFTEST), "bench", "bench_runner.py"), tmp_path / "tests" / "bench")
    # named like the IPC tests, whose @cross cases may skip on one CPU
    (tmp_path / "tests" / "test_ipc.py").write_text(TESTS)
    return tmp_path


def run(suite, *args, cpus=None):
    def pin():
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "tests"] + list(args),
                          cwd=suite, capture_output=True, text=True, timeout=120, preexec_fn=pin)


def test_an_unlisted_skip_fails_the_run(suite):
    p = run(suite, "-k", "ok or unlisted")
    assert p.returncode == 1, p.stdout
    assert ("tests/test_ipc.py::test_unlisted: skipped (no reason this machine lacks), and tests/conftest.py "
            "MAY_SKIP does not list it") in p.stdout
    assert re.search(r"^SKIPPED \[1\] tests/test_ipc.py:\d+: no reason this machine lacks$", p.stdout, re.M)  # -rs


def test_a_listed_skip_fails_where_the_machine_has_what_it_needs(suite):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.fail("needs two CPUs to show the failing side (this machine's tests skip @cross rightly)")
    p = run(suite, "-k", "ok or cross")
    assert p.returncode == 1, p.stdout
    assert ("tests/test_ipc.py::test_pair_cross: skipped (one CPU: no cross-CPU placement), though this machine "
            "has two CPUs") in p.stdout


def test_a_listed_skip_passes_where_the_machine_lacks_it(suite):
    p = run(suite, "-k", "ok or cross", cpus={sorted(os.sched_getaffinity(0))[0]})
    assert p.returncode == 0, p.stdout
    assert "1 skipped, each for something this machine lacks" in p.stdout
    assert re.search(r"^SKIPPED \[1\] tests/test_ipc.py:\d+: one CPU: no cross-CPU placement$", p.stdout, re.M)


def test_no_skip_says_so(suite):
    p = run(suite, "-k", "ok")
    assert p.returncode == 0 and "no test skipped" in p.stdout, p.stdout


# ---- what hides a test besides pytest.skip in its body: a whole module
# skipped at collection, and xfails (expected failures, xfail-marked tests
# that pass). Each goes through the same policy.

def module(*body):
    """A test module's text: `import pytest` and the given lines."""
    return "\n".join(("import pytest",) + body) + "\n"


NEVER_COLLECTED = ("def test_never_collected():", "    pass")
MODULE_SKIP = module('pytest.skip("no reason this machine lacks", allow_module_level=True)', *NEVER_COLLECTED)
IMPORT_SKIP = module('pytest.importorskip("kbench_no_such_module")', *NEVER_COLLECTED)
XFAILS = module('@pytest.mark.xfail(reason="known to fail")', "def test_marked():", "    assert False",
                "def test_called():", '    pytest.xfail("gave up")',
                '@pytest.mark.xfail(reason="thought to fail")', "def test_passes_anyway():", "    pass")
LISTED_XFAIL = module('@pytest.mark.xfail(reason="one CPU: no cross-CPU placement")', "def test_xfail_cross():",
                      "    assert False")


def suite_of(suite, files):
    (suite / "tests" / "test_ipc.py").unlink()
    for name, text in files.items():
        (suite / "tests" / name).write_text(text)
    return suite


@pytest.mark.parametrize("text", [MODULE_SKIP, IMPORT_SKIP], ids=["allow_module_level", "importorskip"])
def test_a_module_skipped_at_collection_goes_through_the_policy(suite, text):
    p = run(suite_of(suite, {"test_gone.py": text, "test_fine.py": "def test_ok():\n    pass\n"}))
    assert p.returncode == 1, p.stdout
    assert re.search(r"^tests/test_gone.py: skipped at collection \(.+\), and tests/conftest.py MAY_SKIP does not "
                     r"list it$", p.stdout, re.M), p.stdout
    assert "1 passed, 1 skipped" in p.stdout


def test_unlisted_xfails_fail_the_run(suite):
    p = run(suite_of(suite, {"test_x.py": XFAILS}))
    assert p.returncode == 1, p.stdout
    for line in ("tests/test_x.py::test_marked: xfailed (known to fail), and tests/conftest.py MAY_SKIP does not "
                 "list it",
                 "tests/test_x.py::test_called: xfailed (gave up), and tests/conftest.py MAY_SKIP does not list it",
                 "tests/test_x.py::test_passes_anyway: xpassed (thought to fail), and tests/conftest.py MAY_SKIP "
                 "does not list it"):
        assert line in p.stdout, p.stdout


def test_a_listed_xfail_passes_only_where_the_machine_lacks_it(suite):
    suite_of(suite, {"test_ipc.py": LISTED_XFAIL})
    p = run(suite, cpus={sorted(os.sched_getaffinity(0))[0]})
    assert p.returncode == 0, p.stdout
    assert "1 skipped, each for something this machine lacks" in p.stdout
    if len(os.sched_getaffinity(0)) >= 2:
        p = run(suite)
        assert p.returncode == 1, p.stdout
        assert ("tests/test_ipc.py::test_xfail_cross: xfailed (one CPU: no cross-CPU placement), though this "
                "machine has two CPUs") in p.stdout
