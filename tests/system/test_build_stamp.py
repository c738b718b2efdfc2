"""The build stamp (Makefile): the objects depend on BUILD/build-info.txt,
which holds VERSION, the compiler and the flags, so that a change of any of
them rebuilds everything and meta.json never names a version or flags the
binaries were not built with.  A dry run (make -n, make -q) writes nothing."""
import shutil
import subprocess


def _make(tree, *args):
    r = subprocess.run(["make", "--no-print-directory", "-C", str(tree), "BUILD=build",
                        "--eval", "stamp-noop: ; @:", *args, "stamp-noop"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return tree / "build" / "build-info.txt"


def test_the_stamp_follows_version_and_flags_and_a_dry_run_writes_nothing(tmp_path, root):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("Makefile", "VERSION"):
        shutil.copy2(root / name, tree / name)
    (tree / "VERSION").write_text("9.8.7\n")
    _make(tree, "-n", "CXXFLAGS=-O1")
    assert not (tree / "build" / "build-info.txt").exists()          # make -n: nothing written
    stamp = _make(tree, "CXXFLAGS=-O1")
    first = stamp.read_text()
    assert first.startswith("9.8.7 | ") and "| -O1 |" in first
    _make(tree, "-n", "CXXFLAGS=-O3")
    assert stamp.read_text() == first                                 # dry run: unchanged
    _make(tree, "CXXFLAGS=-O1")
    assert stamp.read_text() == first                                 # same build: unchanged
    (tree / "VERSION").write_text("9.8.8\n")
    _make(tree, "CXXFLAGS=-O1")
    assert stamp.read_text().startswith("9.8.8 | ")                   # a new version: a new stamp
    # every object depends on it
    r = subprocess.run(["make", "-p", "-n", "-C", str(tree), "BUILD=build", "--eval", "stamp-noop: ; @:",
                        "stamp-noop"], capture_output=True, text=True, timeout=120)
    assert "build/obj/%.o: src/%.cpp build/build-info.txt" in r.stdout
