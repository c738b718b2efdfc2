"""The runs a command line names: directories, or kernels by the names the
tables print.

A kernel is HOST/RELEASE, then make run LABEL=...'s [LABEL], then
split_identities' ~HASH when runs of one name differ
(myhost/6.8.0[patched], myhost/6.8.0~1a2b3c).  kbench-run puts a labelled
kernel's runs in results/HOST/RELEASE[LABEL]/, so the name is a path under
the results root; results recorded before that keep every label's runs in
results/HOST/RELEASE/, and the name picks its kernel's runs out of them.
"""
import glob
import os
import re
from pathlib import Path

from . import groups as groups_mod, load

_KERNEL_NAME = re.compile(r"^(?P<release>.+?)(?P<label>\[[^\]/]*\])?(?P<hash>~[0-9a-f]{6})?$")


def resolve(path_text, results):
    """A directory argument: as given, else under the results root."""
    p = Path(path_text)
    alt = Path(results) / path_text if results is not None else None
    return alt if not p.exists() and alt is not None and alt.exists() else p


def kernel_dirs(text, results):
    """A name that is not a path but HOST/KERNEL as the tables print it:
    (the directories that may hold its runs, nearest first: RELEASE[LABEL]/,
    then RELEASE/; the kernel's name; the host's), or None when the name has
    no label or hash to take off, or no such directory exists."""
    head, _, kernel = text.rstrip("/").rpartition("/")
    m = _KERNEL_NAME.match(kernel)
    if not m or not (m.group("label") or m.group("hash")):
        return None
    prefix = head + "/" if head else ""
    dirs = []
    for name in dict.fromkeys((m.group("release") + (m.group("label") or ""), m.group("release"))):
        d = resolve(prefix + name, results)
        if d.is_dir():
            dirs.append(d)
    return (dirs, kernel, head.rpartition("/")[2]) if dirs else None


def _pick(arg, dirs, kernel, host, warn):
    """The runs of KERNEL in the first of DIRS that has some; none, said
    through `warn` with the kernels there are, when no directory has."""
    candidates = []
    for d in dirs:
        candidates = load.load_runs([d], warn)
        groups_mod.split_identities(candidates)
        picked = [r for r in candidates if r.kernel == kernel]
        if len({r.host for r in picked}) > 1 and any(r.host == host for r in picked):
            picked = [r for r in picked if r.host == host]
        if picked:
            return picked
    release = dirs[-1]
    there = {f"{r.host}/{r.kernel}" for r in candidates}
    there |= {f"{release.parent.name}/{d.name}" for d in release.parent.glob(glob.escape(release.name) + "[[]*")
              if d.is_dir()}
    warn(f"{arg}: no kernel of that name in {release.parent}"
         + (f"; there are: {', '.join(sorted(there))}" if there else ""))
    return []


def named_after(kernels, arg, results):
    """Of the kernels (anything with a .label) found under the directory
    ARG, the one ARG is named after (its last two parts, HOST/RELEASE: a
    kernel directory of results recorded before each label had its own),
    or None."""
    tail = "/".join(resolve(arg, results).resolve().parts[-2:])
    own = [k for k in kernels if k.label == tail]
    return own[0] if len(own) == 1 else None


def load_args(args, results, warn):
    """The runs the arguments name, each a run directory or any directory
    above runs (as given, else under the results root `results`), or a
    kernel by the name the tables print.  A name that matches nothing is
    said through `warn`.  The runs come without duplicates."""
    paths, names = [], []
    for arg in map(str, args):
        p = resolve(arg, results)
        found = None if p.exists() else kernel_dirs(arg, results)
        if found is None:
            paths.append(p)     # load_runs says what is wrong with it
        else:
            names.append((arg,) + found)
    runs = load.load_runs(paths, warn) if paths else []
    for arg, dirs, kernel, host in names:
        runs += _pick(arg, dirs, kernel, host, warn)
    seen, out = set(), []
    for r in runs:
        real = os.path.realpath(r.path)
        if real not in seen:
            seen.add(real)
            out.append(r)
    return out
