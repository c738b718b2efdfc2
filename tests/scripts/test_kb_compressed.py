"""Runs as kbench-run leaves them since it compresses them (samples.jsonl.gz,
runs.jsonl.gz), runs recorded before (plain), the moments in between that a
crash can leave (both), and compressed files cut short: every form reads,
the same lines give the same run, and damage is said, never a traceback."""
import gzip
import pathlib
import shutil

from kbench.model import decl, load


def read(paths):
    w = load.Warnings()
    return load.load_runs(paths, w), w.messages


def compress(run_dir, *names, keep=False):
    for name in names:
        p = run_dir / name
        (run_dir / f"{name}.gz").write_bytes(gzip.compress(p.read_bytes()))
        if not keep:
            p.unlink()


def same_run(a, b):
    """The cases, reps, samples and invocations of two Runs are the same."""
    assert a.cases.keys() == b.cases.keys()
    for name, c in a.cases.items():
        assert c.reps == b.cases[name].reps and c.counters == b.cases[name].counters, name
    assert [dict(i, line=0) for i in a.invocations] == [dict(i, line=0) for i in b.invocations]


def test_a_compressed_run_reads_as_the_plain_one(base_run, tmp_path):
    plain, msgs = read([base_run])
    assert msgs == []
    compress(base_run, "samples.jsonl", "runs.jsonl")
    assert load.is_run_dir(base_run)
    (gz,), msgs = read([base_run.parent.parent])     # found from above, too
    assert msgs == []
    same_run(plain[0], gz)


def test_both_forms_the_plain_one_is_read(base_run):
    """A crash between the rename of FILE.gz and the removal of FILE, or a
    --resume that made FILE again and appended to it: FILE is the one."""
    (plain,), _ = read([base_run])
    compress(base_run, "samples.jsonl", "runs.jsonl", keep=True)
    (base_run / "samples.jsonl.gz").write_bytes(gzip.compress(b""))    # not what is read
    (both,), msgs = read([base_run])
    assert msgs == []
    same_run(plain, both)


def test_a_cut_compressed_file_keeps_the_lines_before_the_cut(base_run):
    (plain,), _ = read([base_run])
    n = sum(len(v) for c in plain.cases.values() for v in c.reps.values())
    compress(base_run, "samples.jsonl")
    gz = base_run / "samples.jsonl.gz"
    data = gz.read_bytes()
    gz.write_bytes(data[:len(data) // 2])
    (cut,), msgs = read([base_run])
    kept = sum(len(v) for c in cut.cases.values() for v in c.reps.values())
    assert 0 < kept < n
    assert any("samples.jsonl.gz: the compressed data is cut off; the lines before the cut are read" in m
               for m in msgs), msgs
    gz.write_bytes(data[:len(data) // 2] + b"\x00garbage" * 100)
    (bad,), msgs = read([base_run])
    assert 0 < sum(len(v) for c in bad.cases.values() for v in c.reps.values()) < n
    # zlib reads garbage as data until it cannot: said as damage or as a cut, and the lines before kept
    assert any("samples.jsonl.gz: damaged compressed data" in m or "samples.jsonl.gz: the compressed data is cut off"
               in m for m in msgs), msgs


def test_not_gzip_at_all_is_said(base_run):
    compress(base_run, "samples.jsonl")
    (base_run / "samples.jsonl.gz").write_bytes(b"not gzip\n" * 10)
    (run,), msgs = read([base_run])
    assert run.cases == {} and any("damaged compressed data" in m for m in msgs), msgs


VALIDATION_RUNS = pathlib.Path(__file__).resolve().parents[1] / "validation" / "data" / "host-scale"


def _validation_run():
    return next(p for p in sorted(VALIDATION_RUNS.iterdir())
                if all((p / f"{name}.gz").exists() for name in ("cases.jsonl", "samples.jsonl", "runs.jsonl")))


def test_validation_data_reads_where_it_lies(tmp_path):
    """tests/validation/data keeps its runs gzipped (cases.jsonl too): read
    in place, the same as decompressed."""
    src = _validation_run()
    (a,), msgs = read([src])
    assert msgs == [] and a.cases and a.invocations
    assert decl.read_declarations(src, msgs.append, load.iter_jsonl)      # cases.jsonl.gz
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    for p in dst.glob("*.gz"):
        p.with_suffix("").write_bytes(gzip.decompress(p.read_bytes()))
        p.unlink()
    (b,), _ = read([dst])
    same_run(a, b)
    assert decl.read_declarations(src, msgs.append, load.iter_jsonl) == \
        decl.read_declarations(dst, msgs.append, load.iter_jsonl)
