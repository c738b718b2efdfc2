"""Shared pytest fixtures: where the build and the repository are."""
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
# the shared runners of the layers: bench_runner (bench and harness tests),
sys.path.insert(0, str(ROOT / "tests" / "bench"))
# and driver_runner (driver and system tests)
sys.path.insert(0, str(ROOT / "tests" / "driver"))


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def build_dir():
    """The build tree `make test` just built (KBENCH_BUILD, default build/)."""
    path = ROOT / os.environ.get("KBENCH_BUILD", "build")
    if not (path / "bin").is_dir():
        pytest.fail(f"{path}/bin does not exist: run `make` first (make test does)")
    return path


@pytest.fixture(scope="session")
def bin_dir(build_dir):
    return build_dir / "bin"


@pytest.fixture(scope="session")
def driver(bin_dir):
    """build/bin/kbench-run (the driver tests and the fault tests use it)."""
    path = bin_dir / "kbench-run"
    if not path.exists():
        pytest.fail(f"{path} does not exist: run `make` first")
    return path
