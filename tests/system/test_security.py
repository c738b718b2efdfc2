"""Security (issue 8): temporary files, planted symlinks, shell commands,
and running as an ordinary user.

- Every file or directory a binary creates is inside a private directory
  made by mkdtemp (mode 0700, named kbench-<bench>-XXXXXX, directly in
  $TMPDIR), and every file is created with O_EXCL: seen with strace -f -y,
  one case of every variant (all lat_fs cases: their modes differ).
- Symlinks planted where the binaries write (inside each private directory
  right after mkdtemp, by a preloaded library, under the names they create
  there; and in $TMPDIR under their own names) are never followed: a
  binary refuses the name ('File exists') or does not use it, its cleanup
  removes the links, their targets stay as they were and dangling ones are
  not created.
- Neither the driver nor the scripts run a shell or any command built from
  text (a scan of the sources; they read result files, so a string from a
  result file could otherwise reach a shell).
- Every variant runs as an ordinary user (uid 65534 when run as root): it
  passes, or skips with 77 only where bench_runner.ALLOWED_SKIPS allows it
  here; so does a small driver run.
  Nothing in the suite needs root.
"""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from bench_runner import is_dynamic, ran_or_allowed_skip
from faultlib import IS_ROOT, bench_binaries, list_cases, one_case_per_variant

QUICK = ["--iters", "2", "--samples", "1", "--warmup-ms", "0"]
ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def cases_to_check(bin_dir):
    """One case per variant, plus every lat_fs case."""
    picked = one_case_per_variant(bin_dir)
    if (bin_dir / "lat_fs").exists():
        have = {c["case"] for _, c in picked}
        picked += [(bin_dir / "lat_fs", c) for c in list_cases(bin_dir / "lat_fs") if c["case"] not in have]
    return picked


def strace_usable():
    if not shutil.which("strace"):
        return False
    return subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True, timeout=60).returncode == 0


def no_leak_check(env):
    # LeakSanitizer (ASan builds) cannot run under ptrace.
    opts = [o for o in env.get("ASAN_OPTIONS", "").split(":") if o and not o.startswith("detect_leaks=")]
    return dict(env, ASAN_OPTIONS=":".join(opts + ["detect_leaks=0"]))


# strace -y shows an fd argument as 3</path>; -qq drops exit notes.
CALL = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)")
FD_PATH = re.compile(r"^(-?\d+|AT_FDCWD)(?:<(.*)>)?$")


def split_args(s):
    """Top-level comma split of a strace argument list (strings may hold commas)."""
    out, cur, depth, quoted, esc = [], "", 0, False, False
    for ch in s:
        if quoted:
            cur += ch
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                quoted = False
            continue
        if ch == '"':
            quoted = True
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def unquote(s):
    return s[1:-1] if s.startswith('"') and s.endswith('"') else s


def resolve(dirfd, path):
    if path.startswith("/"):
        return os.path.normpath(path)
    m = FD_PATH.match(dirfd)
    base = m.group(2) if m and m.group(2) else os.getcwd()
    return os.path.normpath(os.path.join(base, path))


def creations(trace_text):
    """(syscall, full path, flags text, mode text, result) of every call that
    can create something in the file system."""
    out = []
    for line in trace_text.splitlines():
        m = CALL.match(line)
        if not m:
            continue
        _, name, args_text, result = m.groups()
        a = split_args(args_text)
        if name == "openat" and "O_CREAT" in a[2]:
            out.append((name, resolve(a[0], unquote(a[1])), a[2], a[3] if len(a) > 3 else "", int(result)))
        elif name in ("open", "creat") and (name == "creat" or "O_CREAT" in a[1]):
            out.append((name, resolve("AT_FDCWD", unquote(a[0])), a[1] if name == "open" else "O_CREAT|O_TRUNC",
                        a[-1], int(result)))
        elif name == "mkdir":
            out.append((name, resolve("AT_FDCWD", unquote(a[0])), "", a[1], int(result)))
        elif name in ("mkdirat", "mknodat", "symlinkat"):
            i = 1 if name != "symlinkat" else 2
            d = a[0] if name != "symlinkat" else a[1]
            out.append((name, resolve(d, unquote(a[i])), "", a[-1], int(result)))
        elif name in ("mknod", "symlink", "link"):
            out.append((name, resolve("AT_FDCWD", unquote(a[-1] if name != "mknod" else a[0])), "", "", int(result)))
        elif name in ("linkat", "renameat", "renameat2"):
            out.append((name, resolve(a[2], unquote(a[3])), "", "", int(result)))
        elif name == "rename":
            out.append((name, resolve("AT_FDCWD", unquote(a[1])), "", "", int(result)))
        elif name == "bind" and "AF_UNIX" in args_text and "sun_path" in args_text:
            p = re.search(r'sun_path="([^"]*)"', args_text)
            if p and p.group(1):
                out.append((name, resolve("AT_FDCWD", p.group(1)), "", "", int(result)))
    return out


PRIVATE_DIR = re.compile(r"^kbench-[A-Za-z0-9_]+-[A-Za-z0-9]{6}$")


def check_creations(tmp, made):
    """Problems with what one binary created, as strings."""
    problems, private = [], []
    tmp = os.path.normpath(str(tmp))
    for name, path, flags, mode, result in made:
        if result < 0:
            continue
        parent = os.path.dirname(path)
        if name == "mkdir" and parent == tmp and PRIVATE_DIR.match(os.path.basename(path)):
            if mode != "0700":
                problems.append(f"{path}: private directory made with mode {mode}")
            private.append(path)
            continue
        inside = [d for d in private if path.startswith(d + "/")]
        if not inside:
            problems.append(f"{name} {path}: outside a private mkdtemp directory")
        if name in ("open", "openat", "creat") and "O_EXCL" not in flags:
            problems.append(f"{name} {path}: created without O_EXCL ({flags})")
    return problems


@pytest.mark.skipif(not strace_usable(), reason="strace missing or not allowed here")
def test_strace_temp_files_private_and_exclusive(bin_dir, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = no_leak_check(dict(os.environ, TMPDIR=str(tmp)))
    calls = "open,openat,creat,mkdir,mkdirat,mknod,mknodat,link,linkat,symlink,symlinkat,rename,renameat,renameat2,bind"
    problems, used = [], []
    for binary, case in cases_to_check(bin_dir):
        trace = tmp_path / "trace"
        proc = subprocess.run(["strace", "-f", "-qq", "-y", "-e", f"trace={calls}", "-o", str(trace), str(binary)]
                              + case["args"] + QUICK, capture_output=True, text=True, env=env, timeout=300)
        try:
            ran_or_allowed_skip(case, proc)
        except AssertionError as e:
            problems.append(str(e))
            continue
        made = creations(trace.read_text())
        if made:
            used.append(case["case"])
        problems += [f"{case['case']}: {p}" for p in check_creations(tmp, made)]
    assert not problems, "\n".join(problems)
    assert used, "no binary created a temporary file?"
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(not strace_usable(), reason="strace missing or not allowed here")
def test_strace_driver_temp_files_private_and_exclusive(driver, bin_dir, tmp_path):
    """The driver's per-invocation TMPDIR is itself a private mkdtemp directory."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    env = no_leak_check(dict(os.environ, TMPDIR=str(tmp)))
    trace = tmp_path / "trace"
    proc = subprocess.run(["strace", "-f", "-qq", "-y", "-e", "trace=open,openat,creat,mkdir,mkdirat,rename,renameat2",
                           "-o", str(trace), str(driver), "--no-table", "--bin-dir", str(bin_dir), "--no-controls", "--only",
                           r"^(lat_syscall stat|lat_fs create dir=default,mode=fresh,size_kb=0|bw_file_rd io_only size_kb=512)$",
                           "--reps", "1", "--samples", "1", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    made = [m for m in creations(trace.read_text()) if m[1].startswith(str(tmp) + "/")]
    assert made, "nothing was created in TMPDIR"
    problems = check_creations(tmp, made)
    assert not problems, "\n".join(problems)
    assert list(tmp.iterdir()) == []


# Names the binaries use inside their private directories (seen with
# strace: files, directories, lat_fs's s0/s1/reuse and f0000000 names,
# lat_pathwalk's components), and names an attacker would guess.
PLANTED_NAMES = ["file", "data", "f0000000", "s0", "s1", "reuse", "abcdefgh", "kbench", "tmp", "sock", "fifo"]

# Built into a preload library: after the real mkdtemp, symlinks are planted
# in the new private directory under KBENCH_PLANT's names ("NAME=TARGET"
# lines), as an attacker who could write there would (mode 0700 keeps
# everyone else out, so this is the worst case), and each plant is logged.
PLANT_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *mkdtemp(char *templ) {
  char *(*real)(char *) = (char *(*)(char *))dlsym(RTLD_NEXT, "mkdtemp");
  char *dir = real(templ);
  const char *spec = getenv("KBENCH_PLANT");
  const char *log = getenv("KBENCH_PLANT_LOG");
  if (dir == NULL || spec == NULL) return dir;
  char *copy = strdup(spec), *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *eq = strchr(line, '=');
    if (eq == NULL) continue;
    *eq = '\0';
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, line);
    if (symlink(eq + 1, path) != 0) { perror("kbench plant: symlink"); abort(); }
  }
  free(copy);
  if (log != NULL) {
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) { dprintf(fd, "%s\n", dir); close(fd); }
  }
  return dir;
}
"""


@pytest.fixture
def plant_library(tmp_path, bin_dir):
    if not is_dynamic(bin_dir / "lat_syscall"):
        pytest.skip("static binaries: a preloaded library cannot plant symlinks in their directories")
    src = tmp_path / "plant.c"
    src.write_text(PLANT_C)
    lib = tmp_path / "plant.so"
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src), "-ldl"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return lib


def test_planted_symlinks_not_followed(bin_dir, tmp_path, plant_library):
    """Symlinks planted where the binaries write: in every private directory
    right after mkdtemp (by a preloaded library), under the names the
    binaries create there, pointing at files, at a directory, and at
    nothing; also in $TMPDIR itself. A binary must refuse to create through
    them (O_EXCL, mkdir: 'File exists', exit 1) or not use the name; its
    cleanup must remove the links without following them. Every victim stays
    as it was, no dangling target is created."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    victims = tmp_path / "victims"
    victims.mkdir()
    victim_dir = victims / "dir"
    victim_dir.mkdir()
    (victim_dir / "keep").write_text("keep\n")

    def targets(names, tag):
        out = {}
        for i, name in enumerate(names):
            if i % 3 == 0:
                t = victims / f"{tag}-victim-{i}"
                t.write_text(f"victim {tag} {i}\n")
            elif i % 3 == 1:
                t = victims / f"{tag}-dangling-{i}"  # would be created if followed with O_CREAT
            else:
                t = victim_dir  # would be emptied by a cleanup that follows links
            out[name] = t
        return out

    inside = targets(PLANTED_NAMES, "in")
    top_names = list(PLANTED_NAMES)
    for b in bench_binaries(bin_dir):
        top_names += [b.name, f"kbench-{b.name}", f"kbench-{b.name}-XXXXXX"]
    top = targets(top_names, "top")
    for name, target in top.items():
        (tmp / name).symlink_to(target)
    log = tmp_path / "planted.log"
    env = dict(os.environ, TMPDIR=str(tmp), LD_PRELOAD=str(plant_library), KBENCH_PLANT_LOG=str(log),
               KBENCH_PLANT="\n".join(f"{n}={t}" for n, t in inside.items()))
    # ASan builds: the preloaded library comes before the ASan runtime.
    env["ASAN_OPTIONS"] = ":".join(o for o in [env.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0"] if o)
    bad, refused = [], []
    for binary, case in cases_to_check(bin_dir):
        proc = subprocess.run([str(binary)] + case["args"] + QUICK, capture_output=True, text=True, env=env,
                              timeout=300)
        # Refused: a creation failed on the planted name (O_EXCL, mkdir), or
        # lat_pathwalk negative found its missing name present (a stat only).
        if (proc.returncode == 1 and proc.stdout == "" and
                proc.stderr.strip().endswith((": File exists", "lat_pathwalk: stat: the missing path exists"))):
            refused.append(case["case"])
            continue
        try:
            ran_or_allowed_skip(case, proc)
        except AssertionError as e:
            bad.append(str(e))
    assert not bad, "\n".join(bad)
    planted = log.read_text().splitlines() if log.exists() else []
    assert planted, "the preloaded library planted nothing"
    # The binaries that create files refused the planted names.
    for prefix in ("lat_fs create", "lat_fs delete", "lat_pathwalk", "lat_syscall stat", "bw_file_rd",
                   "bw_mmap_rd", "lat_mmap", "lat_pagefault file", "lat_select select"):
        assert any(c.startswith(prefix) for c in refused), (prefix, refused)
    for links in (inside, top):
        for name, target in links.items():
            if target == victim_dir:
                continue
            if "-victim-" in target.name:
                tag, _, i = target.name.split("-")
                assert target.read_text() == f"victim {tag} {i}\n", f"{target} was written through {name}"
            else:
                assert not os.path.lexists(target), f"{target} was created through {name}"
    assert sorted(p.name for p in victim_dir.iterdir()) == ["keep"], "the victim directory was changed"
    assert (victim_dir / "keep").read_text() == "keep\n"
    for name, target in top.items():
        link = tmp / name
        assert link.is_symlink() and os.readlink(link) == str(target), f"{link} was replaced"
    assert sorted(p.name for p in tmp.iterdir()) == sorted(top), "something was left in TMPDIR"
    assert not [d for d in planted if os.path.lexists(d)], "a private directory was left behind"


# ---- no shell ---------------------------------------------------------------------

SHELL_CPP = re.compile(r"\b(system|popen|execl|execlp|execle|execvp|execvpe|posix_spawnp?)\s*\(|\"/bin/sh\"|\"sh\"")
SHELL_PY = re.compile(r"\bshell\s*=\s*True|\bos\.(system|popen|exec\w*|spawn\w*)\s*\(|\beval\s*\(|\bexec\s*\(")


def python_sources():
    scripts = ROOT / "scripts"
    if not scripts.is_dir():
        return []
    out = []
    for p in sorted(scripts.rglob("*")):
        if p.is_file() and (p.suffix == ".py" or (p.suffix == "" and p.read_bytes()[:2] == b"#!")):
            out.append(p)
    return out


def test_no_shell_in_driver_or_scripts():
    """The driver runs only the benchmark binaries it found, with execv and an
    argument vector; the scripts run nothing at all. Result files are read by
    both, so this keeps any string in them away from a shell."""
    hits = []
    driver = sorted((ROOT / "src" / "driver").glob("*.[ch]pp"))
    assert driver, "no driver sources"
    for p in driver:
        for n, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            if SHELL_CPP.search(code):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    for p in python_sources():
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            code = line.split("#", 1)[0]
            if SHELL_PY.search(code):
                hits.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not hits, "\n".join(hits)
    # The one exception: bisect-step runs the build and run commands its user
    # gives on its own command line (--build, --run), through /bin/sh -c as
    # typed, never a string read from a result file.  No other script does.
    sh_c = [f"{p.relative_to(ROOT)}:{n}" for p in python_sources()
            for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
            if re.search(r"""["']/bin/sh["']\s*,\s*["']-c["']""", line.split("#", 1)[0])]
    assert sh_c and all(h.startswith("scripts/kbench/bisect.py:") for h in sh_c), sh_c


# ---- an ordinary user -----------------------------------------------------------------

def test_every_variant_as_ordinary_user(bin_dir, user_dir, as_nobody):
    env = dict(os.environ, TMPDIR=str(user_dir))
    bad = []
    for binary, case in one_case_per_variant(bin_dir):
        proc = subprocess.run([str(binary)] + case["args"] + QUICK, capture_output=True, text=True, env=env,
                              timeout=300, preexec_fn=as_nobody())
        # Only the skips any user may get (bench_runner.ALLOWED_SKIPS): none
        # is about privileges, since nothing in the suite needs root.
        try:
            ran_or_allowed_skip(case, proc)
        except AssertionError as e:
            bad.append(str(e))
    assert not bad, "\n".join(bad)
    assert list(user_dir.iterdir()) == []


def test_driver_as_ordinary_user(driver, bin_dir, user_dir, as_nobody):
    out = user_dir / "results"
    env = dict(os.environ, TMPDIR=str(user_dir))
    proc = subprocess.run([str(driver), "--bin-dir", str(bin_dir), "--no-controls", "--only",
                           r"^(lat_syscall (null|stat)|lat_pipe rt @unpinned|lat_proc exec)$",
                           "--reps", "1", "--samples", "2", "--counters", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=300, preexec_fn=as_nobody())
    assert proc.returncode == 0, proc.stderr
    run_dir = pathlib.Path(proc.stdout.strip())
    assert run_dir.is_dir() and run_dir.is_relative_to(out)
    if IS_ROOT:
        assert run_dir.stat().st_uid == 65534
    assert sorted(p.name for p in user_dir.iterdir()) == ["results"]
