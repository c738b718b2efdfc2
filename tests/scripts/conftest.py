"""Fixtures of the scripts' tests: the synthetic run generator and the
committed fixture runs.  Nothing here needs the C++ build."""
import importlib
import shutil
import sys
import pathlib

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from kb_helpers import BASE_DIR, NEW_DIR, one_run  # noqa: E402

import make_fixture  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def run_cache(tmp_path_factory):
    """The cache of runs read (model/runcache.py) in a directory of the
    tests' own, for the scripts they start too: never the user's."""
    import os
    old = os.environ.get("KBENCH_CACHE")
    os.environ["KBENCH_CACHE"] = str(tmp_path_factory.mktemp("run-cache"))
    yield os.environ["KBENCH_CACHE"]
    if old is None:
        del os.environ["KBENCH_CACHE"]
    else:
        os.environ["KBENCH_CACHE"] = old


@pytest.fixture(scope="session")
def gen():
    return make_fixture


VALIDATION = pathlib.Path(__file__).resolve().parents[1] / "validation"


@pytest.fixture
def validation_script():
    """A function importing a script of tests/validation by its module name
    (host_scale, rep_budget, ...); their directory is on sys.path only for
    the test."""
    sys.path.insert(0, str(VALIDATION))
    yield importlib.import_module
    sys.path.remove(str(VALIDATION))


@pytest.fixture(scope="session")
def fixture_runs():
    """(base kernel dir, new kernel dir) of the committed fixture runs."""
    return BASE_DIR, NEW_DIR


@pytest.fixture
def base_run(tmp_path):
    """A private copy of the committed base run (tests may damage it)."""
    src = one_run(BASE_DIR)
    dst = tmp_path / "results" / "testhost" / "6.1.0-base" / src.name
    shutil.copytree(src, dst)
    return dst
