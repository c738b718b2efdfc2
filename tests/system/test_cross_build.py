"""The cross build (Makefile, issue 31): make STATIC=1 ARCH=arm64 (or
CROSS=PREFIX-) compiles with the cross toolchain into its own directory and
names the target in the build stamp; an ARCH exported by a kernel tree's
shell is ignored; the goals that run here refuse a cross build. Dry runs
(make -n) in a copy of the tree's Makefile and sources: nothing is built,
nothing installed."""
import os
import shutil
import subprocess

import pytest


@pytest.fixture
def tree(tmp_path, root):
    t = tmp_path / "tree"
    t.mkdir()
    for name in ("Makefile", "VERSION"):
        shutil.copy2(root / name, t / name)
    shutil.copytree(root / "src", t / "src")
    shutil.copytree(root / "scripts", t / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    return t


def make(tree, *args, env=None):
    e = {k: v for k, v in os.environ.items() if k not in ("ARCH", "CROSS", "CXX", "CC", "AR", "MAKEFLAGS")}
    return subprocess.run(["make", "--no-print-directory", "-C", str(tree), *args], capture_output=True, text=True,
                          timeout=120, env=dict(e, **(env or {})))


def commands(r):
    return [line for line in r.stdout.splitlines() if not line.startswith("echo ")]


def test_arch_arm64_dry_run_compiles_with_the_cross_compiler_into_build_arm64(tree):
    r = make(tree, "-n", "STATIC=1", "ARCH=arm64")
    assert r.returncode == 0, r.stderr
    cmds = commands(r)
    compiles = [c for c in cmds if " -c -o " in c]
    links = [c for c in cmds if " -o build/arm64/bin/" in c and " -c " not in c]
    n_bench = len(list((tree / "src" / "bench").glob("*.cpp")))
    assert compiles and all(c.startswith("aarch64-linux-gnu-g++ ") and " -o build/arm64/obj/" in c for c in compiles)
    assert len(links) == n_bench + 2                     # every benchmark, the driver, kbench-campaign
    assert all(c.startswith("aarch64-linux-gnu-g++ ") and " -static " in c for c in links)
    assert "aarch64-linux-gnu-gcc -O2 -static -o build/arm64/libexec/kbench-exec-helper src/helper/exec_helper.c" in cmds
    assert [c for c in cmds if " rcs build/arm64/lib/libkbench.a" in c][0].startswith("aarch64-linux-gnu-ar ")
    assert not (tree / "build").exists()                 # a dry run writes nothing, not even the stamp
    # The same with CROSS=, and without STATIC its own directory for shared binaries.
    r = make(tree, "-n", "STATIC=1", "CROSS=aarch64-linux-gnu-")
    assert r.returncode == 0 and " -o build/arm64/bin/lat_syscall " in r.stdout, r.stderr
    r = make(tree, "-n", "ARCH=aarch64")
    assert r.returncode == 0 and " -o build/arm64-shared/bin/lat_syscall " in r.stdout, r.stderr
    assert " -static " not in r.stdout.replace("-static -o build/arm64-shared/libexec", "")


def test_an_exported_arch_is_ignored(tree):
    r = make(tree, "-n", "STATIC=1", env={"ARCH": "arm64"})
    assert r.returncode == 0, r.stderr
    assert "aarch64-linux-gnu" not in r.stdout and " -o build/static/bin/lat_syscall " in r.stdout


@pytest.mark.parametrize("args,message", [
    (("ARCH=sparc",), "ARCH=sparc: not an architecture kbench builds for (arm64, x86_64)"),
    (("ARCH=arm64", "test"), "make test runs on this machine"),
    (("CROSS=aarch64-linux-gnu-", "run"), "make run runs on this machine"),
    (("ARCH=arm64", "test-asan"), "no ARCH= or CROSS= with it; a cross build is make STATIC=1 ARCH=arm64"),
])
def test_refused(tree, args, message):
    r = make(tree, "-n", *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not (tree / "build").exists()


def test_the_stamp_names_the_target(tree):
    # CXX and CC given: no cross compiler is looked for or installed.
    r = make(tree, "ARCH=arm64", "STATIC=1", "CXX=/bin/true", "CC=/bin/true", "--eval", "stamp-noop: ; @:",
             "stamp-noop")
    assert r.returncode == 0, r.stderr
    stamp = (tree / "build" / "arm64" / "build-info.txt").read_text()
    assert " | /bin/true | " in stamp and stamp.rstrip("\n").endswith(" | -pthread -static | target arm64")
    assert sorted(p.name for p in (tree / "build").iterdir()) == ["arm64"]
