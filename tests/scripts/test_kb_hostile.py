"""Hostile and random strings in every user-visible field of meta.json
(host, kernel, label, CPU model, command line) never crash a script: every
script exits 0 with no internal error, and the page escapes them."""
import random

import pytest

from kb_helpers import set_meta
from kbench.cli import compare_main, plot_main, report_main, summarize_main

HOSTILE = [
    "h/" + "x" * 40,                      # a '/' and longer than a chart label's width: endless recursion once
    "/" * 33,
    "<script>alert(1)</script>",
    "a\nb\tc\x00d",
    "' OR 1=1; --",
    "ü" * 50 + "/" + "€" * 20,
    " ",
]


def _strings(seed):
    rng = random.Random(seed)
    alphabet = "ab/\\<>&\"' \n\t%{}[]é€\u202e"
    return HOSTILE + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(3)]


STRIPS = {0, 1}
CHARTED = {0, 2, 5, 7}


@pytest.mark.parametrize("i", range(len(_strings(7))))
def test_every_script_survives_a_hostile_meta(tmp_path, gen, capsys, i):
    s = _strings(7)[i]
    a = gen.make_run(tmp_path / "r", "h1", "k1", seed=1, reps=3, samples=2, cases="small", failures=False)
    b = gen.make_run(tmp_path / "r", "h1", "k2", seed=2, reps=3, samples=2, cases="small", failures=False)
    for run in (a, b):
        set_meta(run, host=s if run is b else "h1", kernel_release=s if run is a else "k2", label=s,
                 cpu_model=s, kernel_cmdline=s)
    root = str(tmp_path / "r")
    scripts = [(summarize_main, [root, "--cases"]), (compare_main, [str(a), str(b), "--boot", "100"])]
    if i in STRIPS:    # the raw-sample strips (slow) wrap kernel labels: the strings that once recursed
        scripts += [(plot_main, [root, "--out", str(tmp_path / "plots"), "--boot", "100", "--formats", "png"])]
    if i in CHARTED:
        scripts += [(report_main, [root, "--out", str(tmp_path / "index.html"), "--no-samples", "--boot", "100"])]
    for main, argv in scripts:
        rc = main(argv)
        out, err = capsys.readouterr()
        assert rc == 0, (main.__name__, s, err)
        assert "internal error" not in err, (main.__name__, s, err)
    if i in CHARTED:
        assert "<script>alert(1)</script>" not in (tmp_path / "index.html").read_text()
