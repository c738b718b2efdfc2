"""Fixtures of the scripts' tests: the synthetic run generator and the
committed fixture runs.  Nothing here needs the C++ build."""
import json
import pathlib
import shutil
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent / "data"
sys.path.insert(0, str(DATA))
sys.path.insert(0, str(HERE.parent.parent / "scripts"))

import make_fixture  # noqa: E402

RUNS = DATA / "runs"
BASE_DIR = RUNS / "testhost" / "6.1.0-base"
NEW_DIR = RUNS / "testhost" / "6.6.0-new"


@pytest.fixture(scope="session")
def gen():
    return make_fixture


@pytest.fixture(scope="session")
def fixture_runs():
    """(base kernel dir, new kernel dir) of the committed fixture runs."""
    return BASE_DIR, NEW_DIR


def one_run(kernel_dir):
    runs = [p for p in pathlib.Path(kernel_dir).iterdir() if (p / "meta.json").is_file()]
    assert len(runs) == 1
    return runs[0]


@pytest.fixture
def base_run(tmp_path):
    """A private copy of the committed base run (tests may damage it)."""
    src = one_run(BASE_DIR)
    dst = tmp_path / "results" / "testhost" / "6.1.0-base" / src.name
    shutil.copytree(src, dst)
    return dst


def rewrite_samples(run_dir, fn):
    """Apply fn(dict) -> dict to every sample line of a run."""
    p = pathlib.Path(run_dir) / "samples.jsonl"
    out = []
    for line in p.read_text().splitlines():
        out.append(json.dumps(fn(json.loads(line))))
    p.write_text("\n".join(out) + "\n")


def set_meta(run_dir, **kv):
    p = pathlib.Path(run_dir) / "meta.json"
    meta = json.loads(p.read_text())
    meta.update(kv)
    p.write_text(json.dumps(meta))
