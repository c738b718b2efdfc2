"""A kernel is more than its release: runs of one `uname -r` with another
label (make run LABEL=...), version string, command line or config are
different kernels in every script; runs of one kernel measured under
different conditions are pooled with a loud warning."""
import html
import re

from kbench.model import groups as groups_mod, load, runs
from kbench.cli import compare_main, report_main, summarize_main

from kb_helpers import set_meta


def _two_runs(gen, root, **second):
    """Two runs of release 6.1.0 on host h; meta of the second updated."""
    a = gen.make_run(root, "h", "6.1.0", seed=3, reps=3, samples=2, cases="small", run_id="r1", failures=False)
    b = gen.make_run(root, "h", "6.1.0", seed=4, reps=3, samples=2, cases="small", run_id="r2", failures=False)
    set_meta(b, **second)
    return a, b


def _groups(root):
    w = load.Warnings()
    return groups_mod.group_runs(load.load_runs([root], w), w), w.messages


def test_a_label_makes_a_kernel_of_its_own(tmp_path, gen, capsys):
    _two_runs(gen, tmp_path, label="patched")
    groups, _ = _groups(tmp_path)
    assert [g.label for g in groups] == ["h/6.1.0", "h/6.1.0[patched]"]
    # every script sees two kernels
    assert summarize_main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^h/6\.1\.0: 1 run ", out, re.M) and re.search(r"^h/6\.1\.0\[patched\]: 1 run ", out, re.M)
    assert compare_main([str(tmp_path / "h" / "6.1.0" / "r1"), str(tmp_path / "h" / "6.1.0" / "r2"),
                         "--boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "h/6.1.0[patched]" in out and "against baseline h/6.1.0" in out
    page = tmp_path / "page.html"
    assert report_main([str(tmp_path), "--out", str(page), "--plots", str(tmp_path / "plots"), "--no-samples",
                        "--boot", "200"]) == 0
    capsys.readouterr()
    text = html.unescape(page.read_text())
    assert "h/6.1.0[patched]" in text and "h/6.1.0 (baseline)" in text


def test_another_command_line_is_another_kernel_with_a_warning(tmp_path, gen):
    a, b = _two_runs(gen, tmp_path, kernel_cmdline="root=/dev/vda mitigations=off")
    groups, warnings = _groups(tmp_path)
    assert len(groups) == 2
    labels = sorted(g.label for g in groups)
    assert all(re.fullmatch(r"h/6\.1\.0~[0-9a-f]{6}", x) for x in labels) and labels[0] != labels[1]
    (w,) = [m for m in warnings if "different kernels" in m]
    assert w.startswith("WARNING: h/6.1.0:") and "kernel_cmdline" in w and "LABEL=" in w


def test_a_campaigns_boot_marker_is_not_another_command_line(tmp_path, gen):
    """Each boot of a campaign carries its own marker (kbench.campaign=ID:STEP:TRY):
    the runs of one kernel's boots stay one kernel."""
    a, b = _two_runs(gen, tmp_path, kernel_cmdline="root=/dev/vda panic=10 kbench.campaign=20261206T075131Z:3:1")
    set_meta(a, kernel_cmdline="root=/dev/vda panic=10 kbench.campaign=20261206T075131Z:1:2")
    groups, warnings = _groups(tmp_path)
    assert [g.label for g in groups] == ["h/6.1.0"] and len(groups[0].runs) == 2
    assert not [m for m in warnings if "different kernels" in m]
    set_meta(a, kernel_cmdline="root=/dev/vda panic=10 mitigations=off kbench.campaign=20261206T075131Z:1:2")
    groups, _ = _groups(tmp_path)
    assert len(groups) == 2


def test_another_config_is_another_kernel_only_when_every_run_has_one(tmp_path, gen):
    a, b = _two_runs(gen, tmp_path, kernel_config={"source": "/proc/config.gz", "fnv1a64": "00000000000000aa"})
    groups, warnings = _groups(tmp_path)
    assert len(groups) == 1 and not [m for m in warnings if "different kernels" in m]  # a has none: not compared
    set_meta(a, kernel_config={"source": "/proc/config.gz", "fnv1a64": "00000000000000bb"})
    groups, warnings = _groups(tmp_path)
    assert len(groups) == 2 and any("kernel_config" in m for m in warnings)
    set_meta(a, kernel_config={"source": "/proc/config.gz", "fnv1a64": "00000000000000aa"})
    groups, warnings = _groups(tmp_path)
    assert [g.label for g in groups] == ["h/6.1.0"] and len(groups[0].runs) == 2


def test_runs_of_one_kernel_under_other_conditions_are_pooled_with_a_warning(tmp_path, gen):
    a, _ = _two_runs(gen, tmp_path, governor="powersave")
    set_meta(a, governor="performance")
    groups, warnings = _groups(tmp_path)
    assert len(groups) == 1 and len(groups[0].runs) == 2
    (w,) = [m for m in warnings if "not measured under the same conditions" in m]
    assert w.startswith("WARNING: the 2 runs of h/6.1.0") and "governor (performance | powersave)" in w
    # the same runs alike: no warning
    set_meta(tmp_path / "h" / "6.1.0" / "r2", governor="performance")
    _, warnings = _groups(tmp_path)
    assert not [m for m in warnings if "same conditions" in m]


def test_compare_warns_only_about_conditions_that_matter():
    """Per-run bookkeeping never reads as a difference in conditions."""
    from kbench.model import compare
    base = {"governor": "performance", "options": {"out": "/a", "counters": None}, "cases_planned": 10,
            "mitigations": {"meltdown": "PTI"}, "kernel_cmdline": "ro"}
    other = {"governor": "performance", "options": {"out": "/b", "counters": None}, "cases_planned": 11,
             "mitigations": {"meltdown": "PTI"}, "kernel_cmdline": "ro"}
    assert compare.meta_differences(base, other) == []
    other.update(governor="powersave", options={"out": "/b", "counters": "all"}, mitigations={"meltdown": "off"},
                 kernel_cmdline="ro mitigations=off")
    diffs = {k: (a, b) for k, a, b in compare.meta_differences(base, other)}
    assert set(diffs) == {"governor", "options.counters", "mitigations.meltdown", "kernel_cmdline"}
    assert diffs["options.counters"] == ("-", "all")


def test_debug_information_options_are_no_difference_in_conditions(tmp_path, gen):
    """-g and -g1 (make's default before and now) generate the same code:
    runs built with either are pooled without a warning, and compare sees no
    difference; -O2 against -O3 stays one."""
    from kbench.model import compare
    from kbench.model import load as load_mod
    flags = "-O2 {} -std=c++17 -Wall -Wextra -Werror -Isrc -MMD -MP -pthread"
    assert compare.meta_differences({"cxxflags": flags.format("-g")}, {"cxxflags": flags.format("-g1")}) == []
    assert compare.meta_differences({"cxxflags": flags.format("-ggdb3 -gdwarf-5")},
                                    {"cxxflags": flags.format("-g0")}) == []
    diffs = compare.meta_differences({"cxxflags": flags.format("-g")}, {"cxxflags": flags.format("-g1 -O3")})
    assert [(k, b) for k, _, b in diffs] == [("cxxflags", flags.format("-g1 -O3"))]
    # a -g inside another option is no debug option
    assert compare.meta_differences({"cxxflags": "-O2 -gno-such"}, {"cxxflags": "-O2"}) != []
    assert runs.condition_value("compiler", "gcc -g") == "gcc -g"

    a, b = _two_runs(gen, tmp_path)
    set_meta(a, cxxflags=flags.format("-g"))
    set_meta(b, cxxflags=flags.format("-g1"))
    groups, warnings = _groups(tmp_path)
    assert len(groups) == 1 and not [m for m in warnings if "same conditions" in m]
    pooled = runs.merged_meta([load_mod.load_run(r, lambda m: None).meta for r in (a, b)])
    assert pooled["cxxflags"] == flags.format("-g")     # one value: the first run's
    set_meta(b, cxxflags=flags.format("-g1 -O3"))
    _, warnings = _groups(tmp_path)
    (w,) = [m for m in warnings if "same conditions" in m]
    assert "cxxflags (" in w and "-O3" in w


def _options(samples, seed, out):
    return {"reps": 3, "samples": samples, "pin_cpu": 1, "counters": None, "bench_args": "", "seed": seed,
            "out": out}


def test_a_pooled_side_compares_its_options_key_by_key(tmp_path, gen, capsys):
    """Issue 30 item 2: two runs of one kernel with the same options (only
    options.seed and options.out differ, as between any two runs) against a
    third: no difference in conditions, in compare or on the page; a real
    difference between the pooled runs shows both values ("a | b")."""
    a, b = _two_runs(gen, tmp_path)
    c = gen.make_run(tmp_path, "h", "6.6.0", seed=5, reps=3, samples=2, cases="small", run_id="r3", failures=False)
    for run, seed in ((a, 3), (b, 4), (c, 5)):
        set_meta(run, options=_options(2, seed, f"/results/{seed}"))
    page = tmp_path / "page.html"

    def compare_and_page():
        assert compare_main([str(tmp_path / "h" / "6.1.0"), str(tmp_path / "h" / "6.6.0"), "--boot", "200"]) == 0
        out = capsys.readouterr().out
        assert report_main([str(tmp_path / "h"), "--baseline", "h/6.1.0", "--out", str(page), "--plots",
                            str(tmp_path / "plots"), "--no-samples", "--boot", "200"]) == 0
        capsys.readouterr()
        text = page.read_text()
        return out, html.unescape(text), re.findall(r"<tr class='diff'><td>([^<]*)</td>", text)

    from kbench.model import load as load_mod
    pooled = runs.merged_meta([load_mod.load_run(r, lambda m: None).meta for r in (a, b)])
    assert pooled["options"] == {"reps": 3, "samples": 2, "pin_cpu": 1, "counters": None, "bench_args": "",
                                 "seed": "3 | 4", "out": "/results/3 | /results/4"}
    out, text, highlighted = compare_and_page()
    assert "differ in more than the kernel" not in out and "options." not in out
    assert "not measured under the same conditions" not in text and highlighted == []
    # options.seed differs on the page's table, but is no condition
    assert re.search(r"<td>options\.seed</td><td>3 \| 4</td><td>5</td>", text)

    set_meta(b, options=_options(5, 4, "/results/4"))
    out, text, highlighted = compare_and_page()
    lines = out.splitlines()
    i = lines.index("WARNING: the two sides differ in more than the kernel:")
    assert lines[i + 1:i + 3] == ["  options.samples: 2 | 5  ->  2", ""]
    assert "<code>options.samples</code> (see" in text and highlighted == ["options.samples"]


def test_a_kernels_config_is_listed_with_the_kernel_not_as_a_condition(tmp_path, gen, capsys):
    """Two releases with their own configs: compare names the config
    among the kernels' identity ("The kernels: ...") and never among the
    ways the sides "differ in more than the kernel"; a condition that
    does differ (the governor) still warns."""
    a = gen.make_run(tmp_path, "h", "6.1.0", seed=3, reps=3, samples=2, cases="small", run_id="r1", failures=False)
    b = gen.make_run(tmp_path, "h", "6.12.0", seed=4, reps=3, samples=2, cases="small", run_id="r2",
                     failures=False)
    set_meta(a, kernel_config={"source": "/boot/config-6.1.0", "fnv1a64": "00000000000000aa"})
    set_meta(b, kernel_config={"source": "/boot/config-6.12.0", "fnv1a64": "00000000000000bb"}, governor="powersave")
    assert compare_main([str(a), str(b), "--boot", "200"]) == 0
    out = capsys.readouterr().out
    (kernels,) = [ln for ln in out.splitlines() if ln.startswith("The kernels: ")]
    assert "kernel_config.fnv1a64 00000000000000aa -> 00000000000000bb" in kernels
    assert "h/6.12.0" in out.splitlines()[0] and "h/6.1.0" in out.splitlines()[0]
    warning = out[out.index("WARNING: the two sides differ in more than the kernel:"):]
    warning = warning.split("\n\n")[0]
    assert "governor" in warning and "kernel_config" not in warning
