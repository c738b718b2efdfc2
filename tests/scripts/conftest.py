"""Fixtures of the scripts' tests: the synthetic run generator and the
committed fixture runs.  Nothing here needs the C++ build."""
import shutil
import sys
import pathlib

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from kb_helpers import BASE_DIR, NEW_DIR, one_run  # noqa: E402

import make_fixture  # noqa: E402


@pytest.fixture(scope="session")
def gen():
    return make_fixture


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
