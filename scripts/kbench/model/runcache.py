"""A cache of the runs already read: what load.load_run made of a run
directory (its cases, its warnings) and the estimates a comparison made of
it, kept in ${XDG_CACHE_HOME:-~/.cache}/kbench/runs, so that a report over
a results/ that grew by one run reads one run.

An entry is found by what it was made from, never by the run's name alone:
the directory's resolved path, the name and bytes of every file in it,
this package's model code, the Python that pickled it and numpy.  A run
named another way (relative, absolute) is the same run.  A run
rewritten, a file added, or the scripts changed, and the entry is not
found; the run is read again.  An entry holds what reading the run gives,
to the last bit: the cache only saves time.

KBENCH_CACHE=off (or 0, no, false) reads every run afresh and writes
nothing; KBENCH_CACHE=DIR keeps the entries in DIR.  A directory of the
cache that is not this user's own, or that others may write in, is not
used (an entry is a pickle).  Anything that goes wrong with the cache (a
full disk, a damaged entry) makes it read the run again, silently.  The
least recently used entries go beyond MAX_BYTES.
"""
import hashlib
import os
import pickle
import sys
import time
import zlib
from pathlib import Path

FORMAT = 2                  # of an entry: (FORMAT, what it holds)
MAX_BYTES = 256 << 20       # the least recently used entries go above this
_RUN, _EST = ".run", ".est"     # an entry's two files: the run as read; its estimates
_CODE = []                  # the model's fingerprint, once per process
_AT = "_kbench_cache"       # a run's (cache directory, entry), set where it has one


def directory():
    """The cache's directory, or None when it is off or has no place."""
    want = os.environ.get("KBENCH_CACHE", "").strip()
    if want.lower() in ("off", "0", "no", "false"):
        return None
    if want:
        return Path(want)
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if not base:
        home = os.environ.get("HOME", "").strip()
        if not home:
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "kbench" / "runs"


def _code():
    """A digest of the modules that read and estimate runs (every module of
    model/), of the Python running them and of numpy (its generators draw
    the bootstraps)."""
    if not _CODE:
        try:
            import numpy
            numpy_version = numpy.__version__
        except ImportError:         # (the commands need it; a reader of runs alone does not)
            numpy_version = "none"
        h = hashlib.sha256(f"{sys.version}\0{numpy_version}".encode())
        here = Path(__file__).resolve().parent
        for p in sorted(here.glob("*.py")):
            h.update(p.name.encode() + b"\0" + p.read_bytes())
        _CODE.append(h.hexdigest())
    return _CODE[0]


def key(run_dir):
    """The entry's name for a run directory as it is now: a digest of the
    model's code, the directory's resolved path (results/x and
    /home/u/kbench/results/x are one run) and every file in it, name and
    bytes (a file's time says too little: one rewritten within a clock
    tick keeps it); None when it cannot be read (load_run then says why)."""
    d = Path(run_dir)
    h = hashlib.sha256(_code().encode())
    try:
        h.update(f"{d.resolve()}\0".encode())
        with os.scandir(d) as it:
            names = sorted(e.name for e in it if e.is_file())
        for name in names:
            h.update(name.encode() + b"\0")
            with open(d / name, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
            h.update(b"\0")
    except (OSError, ValueError):
        return None
    return h.hexdigest()


def _usable(cache):
    """The cache's directory, made (0700) if it is missing, or None when it
    cannot be, belongs to another user, or others may write in it (an entry
    is a pickle: whoever writes one runs code as the user who reads it)."""
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = cache.stat()
    except OSError:
        return None
    return cache if st.st_uid == os.getuid() and not st.st_mode & 0o022 else None


def _load(path):
    """What the entry file holds, or None; a damaged file is removed, a
    found one marked as recently used (the last to go)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        fmt, held = pickle.loads(zlib.decompress(blob))
        if fmt != FORMAT:
            raise ValueError("an entry of another format")
    except Exception:   # noqa: BLE001 -- any damage: read the run again
        try:
            path.unlink()
        except OSError:
            pass
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return held


def _save(cache, name, held):
    """Write an entry file whole (a reader never sees half of one); False
    when the cache cannot take it."""
    try:
        blob = zlib.compress(pickle.dumps((FORMAT, held), protocol=pickle.HIGHEST_PROTOCOL), 1)
    except Exception:   # noqa: BLE001 -- something that does not pickle: no entry
        return False
    tmp = cache / f".{name}.{os.getpid()}.tmp"
    try:
        tmp.write_bytes(blob)
        os.replace(tmp, cache / name)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    return True


def prune(cache, limit=MAX_BYTES):
    """Remove the least recently used entry files until the rest fit in
    limit, and what a write cut short (Ctrl-C) left over an hour ago."""
    entries, stale = [], []
    try:
        with os.scandir(cache) as it:
            for e in it:
                if e.name.endswith((_RUN, _EST)) and e.is_file():
                    st = e.stat()
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
                elif e.name.endswith(".tmp") and e.stat().st_mtime < time.time() - 3600:
                    stale.append(e.path)
    except OSError:
        return
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        stale.append(path)
        total -= size
    for path in stale:
        try:
            os.unlink(path)
        except OSError:
            pass


def read(dirs, read_one, each):
    """[(run or None, warnings, error or None)] of each of dirs, as
    read_one(dir) gives it (load.load_run), with the runs the cache holds
    taken from it; the others are read by each(fn, items) (worker
    processes), which keep each run they read in the cache unless it
    changed while it was read (its key then differs)."""
    cache = directory()
    cache = _usable(cache) if cache is not None else None
    if cache is None:
        return list(each(read_one, dirs))
    keys = [key(d) for d in dirs]
    out = []
    for d, k in zip(dirs, keys):
        held = _load(cache / (k + _RUN)) if k is not None else None
        if held is not None and held[2] != str(d):      # read under another name (relative, absolute)
            if held[1]:
                held = None     # its warnings name the run as it was named then: read it again
            else:
                held[0].path = Path(d)
        out.append(None if held is None else (held[0], held[1], None))
    todo = [i for i, got in enumerate(out) if got is None]

    def read_keep(i):
        got = read_one(dirs[i])
        if got[2] is None and keys[i] is not None and key(dirs[i]) == keys[i]:
            _save(cache, keys[i] + _RUN, (got[0], got[1], str(dirs[i])))
        return got

    for i, got in zip(todo, each(read_keep, todo)):
        out[i] = got
    for (run, _, err), k in zip(out, keys):
        if err is None and k is not None:
            run.__dict__[_AT] = (cache, k)
    if todo:
        prune(cache)
    return out


def estimates(run, which, make):
    """The estimates `which` (the estimator, resamples, seed, the side's
    name...) of a run: the cache's where it holds them, else make()'s,
    then kept beside the run's entry (the other estimates kept there
    stay).  A run the cache does not hold: make()."""
    at = run.__dict__.get(_AT)
    if at is None:
        return make()
    cache, k = at
    held = _load(cache / (k + _EST))
    held = held if isinstance(held, dict) else {}
    got = held.get(which)
    if got is None:
        got = held[which] = make()
        _save(cache, k + _EST, held)
    return got
