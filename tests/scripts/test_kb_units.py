"""Bandwidth units (issue 14 item 13): kbench's MB/s is 10^6 bytes per
second (bytes_per_op * iters / elapsed_ns * 1000), lmbench's is 2^20; every
bandwidth table header of summarize says which."""
import json
import re

from kb_helpers import BASE_DIR, one_run
from kbench.model import groups as groups_mod, load, summary
from kbench.cli import summarize_main
from kbench.views import summary_text
from kbench.views import units


def test_every_bandwidth_header_says_decimal_megabytes(capsys):
    assert summarize_main([str(BASE_DIR), "--cases"]) == 0
    out = capsys.readouterr().out
    heads = [ln for ln in out.splitlines() if ln.startswith("== ")]
    bw = [h for h in heads if "higher is better" in h]
    assert len(bw) >= 2  # the summary table and the --cases table
    assert all("MB/s = 10^6 B/s" in h and "2^20" in h for h in bw), bw
    assert not [h for h in heads if "lower is better" in h and "MB/s" in h]
    assert all(len(h) <= summary_text.WIDTH for h in bw)


def test_mb_per_s_is_decimal():
    """The value the tables show for a bandwidth sample is bytes / 10^6 per second."""
    line = next(ln for ln in (one_run(BASE_DIR) / "samples.jsonl").read_text().splitlines()
                if '"metric":"bandwidth"' in ln)
    s = json.loads(line)
    value, err = load._sample_value(s)
    assert err is None
    assert abs(value - s["bytes_per_op"] * s["iters"] / (s["elapsed_ns"] / 1e9) / 1e6) < 1e-6 * value
    assert summary_text.fmt_value(12345.0, "bandwidth") == "12.3 GB/s"


def test_every_bandwidth_column_header_of_the_page_says_it(tmp_path):
    """The page's summary tables take each column's unit from units.column_unit."""
    from kbench.model import tables
    runs = load.load_runs([BASE_DIR], load.Warnings())
    groups = groups_mod.group_runs(runs)
    seen = 0
    for t in tables.build_tables(groups):
        for col in t.columns:
            unit, div = units.column_unit(t, col, [100.0])
            if t.metric == "bandwidth":
                assert unit == "MB/s (10^6 B/s)" and div == 1.0
                seen += 1
            else:
                assert "MB/s" not in unit
    assert seen >= 3


def test_every_direction_text_of_a_bandwidth_names_its_unit():
    """compare's section headers, the page's table titles and the charts'
    axes all take the direction from stats.direction_text."""
    from kbench.model import stats
    assert stats.direction_text("bandwidth") == "higher is better; MB/s = 10^6 B/s"
    assert stats.direction_text("latency") == "lower is better"


def test_latency_values_carry_their_unit(capsys):
    """summarize's values: about 3 significant figures and the unit that
    fits, by hand (a microsecond value is never labelled ns)."""
    for v, text in ((262.4, "262 ns"), (62.0, "62.0 ns"), (1.5, "1.50 ns"), (1070.0, "1.07 µs"),
                    (72000.0, "72.0 µs"), (820000.0, "820 µs"), (13.2e6, "13.2 ms"), (2.5e9, "2.50 s")):
        assert summary_text.fmt_value(v, "latency") == text, v
    assert summary_text.fmt_value(float("nan"), "latency") == "-"
    assert summary_text.fmt_value(980.0, "bandwidth") == "980 MB/s"
    # in the table: the base fixture's fork (about 72 µs) and null call (about 62 ns)
    assert summarize_main([str(BASE_DIR)]) == 0
    out = capsys.readouterr().out
    fork = next(ln for ln in out.splitlines() if "fork" in ln and "µs" in ln)
    assert not re.search(r"\d ns", fork), fork
    assert re.search(r"\b(6\d|7\d|8\d)\.\d µs\b", fork), fork
