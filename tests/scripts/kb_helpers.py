"""Helpers shared by the scripts' tests (a uniquely named module: several
test directories have a conftest.py, so `import conftest` is ambiguous)."""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
DATA = HERE.parent / "data"
for p in (str(DATA), str(HERE.parent.parent / "scripts")):
    if p not in sys.path:
        sys.path.insert(0, p)

from kbench.model import groups as groups_mod, load  # noqa: E402  (after the path is set)

RUNS = DATA / "runs"
BASE_DIR = RUNS / "testhost" / "6.1.0-base"
NEW_DIR = RUNS / "testhost" / "6.6.0-new"


def one_run(kernel_dir):
    runs = [p for p in pathlib.Path(kernel_dir).iterdir() if (p / "meta.json").is_file()]
    assert len(runs) == 1
    return runs[0]


def recorded_runs():
    """Every run directory under tests/data (the synthetic fixtures and any
    real recorded run added later)."""
    return sorted(p.parent for p in DATA.rglob("meta.json") if (p.parent / "samples.jsonl").is_file())


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


def grouping_warnings(root, marker):
    """The warnings that loading and grouping every run under root gives
    (what summarize, compare and report print first), those holding marker."""
    w = load.Warnings()
    groups_mod.group_runs(load.load_runs([root], w), w)
    return [m for m in w.messages if marker in m]


def assert_clean_exit(rc, err, code, *messages):
    """A command ended as intended: exit status `code`, every one of
    `messages` on stderr, and no internal error. cli._guard turns every
    unexpected exception into one 'internal error' line with exit 1, so
    the absence of a traceback alone proves nothing."""
    assert rc == code, (rc, err)
    for m in messages:
        assert m in err, (m, err)
    assert "internal error" not in err, err
    assert "Traceback" not in err, err


def memory_curve(ns_of, sizes=tuple(2 ** i for i in range(19)), bcv=None):
    """make_fixture cases: the random chain at each size, ns_of(size) ns;
    bcv: {size: between-rep CV} (default 0.01)."""
    return [dict(bench="lat_mem_rd", variant="random", params=f"size_kb={s}", placement="unpinned",
                 metric="latency", value=ns_of(s), bcv=(bcv or {}).get(s, 0.01), wcv=0.01, bytes=None, two=False)
            for s in sizes]


def steps(s):
    """A curve with clear steps: L1 to 16 KB, L2 to 512 KB, L3 to 16 MB."""
    return 1.2 if s <= 16 else 4.0 if s <= 512 else 12.0 if s <= 16384 else 90.0
