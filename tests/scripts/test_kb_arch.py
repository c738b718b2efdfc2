"""Runs of two architectures (an arm64 guest of scripts/vm-run --arch arm64
beside an x86_64 run of the same release, issue 31): summarize shows each
run's machine (architecture, CPU, page size, caches), and summarize,
compare and the page name the architecture difference first and loudly."""
import re

from kbench.model import load
from kbench.cli import compare_main, report_main, summarize_main
from kbench.views import machine

from kb_helpers import grouping_warnings, set_meta

ARM = dict(arch="aarch64", build_arch="aarch64", cpu_model="ARM Neoverse-N1 (0x41/0xd0c r3p1)", cpu_count=2,
           page_size=65536, cache=[{"level": 1, "type": "Data", "size_kb": 64, "line_bytes": 64},
                                   {"level": 1, "type": "Instruction", "size_kb": 64, "line_bytes": 64},
                                   {"level": 2, "type": "Unified", "size_kb": 1024, "line_bytes": 64},
                                   {"level": 3, "type": "Unified", "size_kb": None, "line_bytes": None}])
X86 = dict(arch="x86_64", build_arch="x86_64", page_size=4096)
ARM_K, X86_K = "6.1.0-57-cloud-arm64", "6.1.0-57-cloud-amd64"
BANNER = f"WARNING: DIFFERENT ARCHITECTURES (x86_64: h/{X86_K}; aarch64: h/{ARM_K})"


def _run(gen, root, kernel, run_id, seed, **meta):
    d = gen.make_run(root, "h", kernel, seed=seed, reps=3, samples=2, cases="small", run_id=run_id, failures=False)
    set_meta(d, **meta)
    return d


def _two(gen, root):
    _run(gen, root, X86_K, "r1", 1, **X86)
    _run(gen, root, ARM_K, "r2", 2, **ARM)


def test_summarize_shows_the_machine_and_names_the_architectures_first(tmp_path, gen, capsys):
    _two(gen, tmp_path)
    assert summarize_main([str(tmp_path)]) == 0
    cap = capsys.readouterr()
    warnings = [line for line in cap.err.splitlines() if "WARNING" in line]
    assert warnings and warnings[0].startswith("warning: " + BANNER), cap.err
    assert "not one kernel against another" in warnings[0]
    text = " ".join(cap.out.split())                # the machine line is wrapped at 100 columns
    assert ("machine: aarch64, ARM Neoverse-N1 (0x41/0xd0c r3p1), 2 CPUs, 64 KB pages, "
            "caches L1d 64K L1i 64K L2 1M L3 ? (64 B lines)") in text
    assert "machine: x86_64, Intel(R) Xeon(R) Processor, 2 CPUs, 4 KB pages" in text


def test_compare_names_the_architecture_first_and_loudly(tmp_path, gen, capsys):
    _two(gen, tmp_path)
    assert compare_main([str(tmp_path / "h" / X86_K), str(tmp_path / "h" / ARM_K)]) == 0
    cap = capsys.readouterr()
    out = cap.out.splitlines()
    assert out[0].startswith(f"Comparing h/{ARM_K}") and out[1].startswith(BANNER)
    i = out.index("WARNING: the two sides differ in more than the kernel:")
    assert out[i + 1] == "  arch: x86_64  ->  aarch64  (A DIFFERENT ARCHITECTURE: not the kernel's change alone)"
    listed = [re.match(r"  (\S+):", line).group(1) for line in out[i + 1:] if re.match(r"  \S+: .*  ->  ", line)]
    assert listed[0] == "arch" and {"build_arch", "page_size", "cpu_model"} <= set(listed[1:]), listed


def test_the_page_shows_the_architectures_as_an_alarm(tmp_path, gen):
    _two(gen, tmp_path)
    page = tmp_path / "p.html"
    assert report_main([str(tmp_path), "--out", str(page), "--no-samples", "--boot", "100"]) == 0
    assert f"<div class='alarm'>DIFFERENT ARCHITECTURES (x86_64: h/{X86_K}; aarch64: h/{ARM_K})" in page.read_text()


def test_one_architecture_no_warning(tmp_path, gen):
    _run(gen, tmp_path, ARM_K, "r1", 1, **ARM)
    _run(gen, tmp_path, "6.12.0-arm64", "r2", 2, **ARM)
    assert grouping_warnings(tmp_path, "ARCHITECTURE") == []


def test_pooled_runs_of_two_architectures_are_named(tmp_path, gen):
    # one kernel label on both: pooled, and its condition warning names arch too
    _run(gen, tmp_path, "6.1.0", "r1", 1, **X86)
    _run(gen, tmp_path, "6.1.0", "r2", 2, **ARM)
    (w,) = grouping_warnings(tmp_path, "DIFFERENT ARCHITECTURES")
    assert w.startswith("WARNING: DIFFERENT ARCHITECTURES (x86_64: h/6.1.0; aarch64: h/6.1.0)")
    (c,) = grouping_warnings(tmp_path, "not measured under the same conditions")
    assert "arch (aarch64 | x86_64)" in c


def test_machine_text_of_older_and_sparse_runs():
    assert machine.machine_text({}) == "architecture not recorded, CPU model not recorded"
    assert machine.machine_text({"arch": "aarch64", "cpu_model": None, "cache": None}) == \
        "aarch64, CPU model not recorded, caches not reported"
    # binaries of another architecture than the machine's (qemu-user, a mistake)
    assert machine.machine_text({"arch": "x86_64", "build_arch": "aarch64", "cpu_model": "x", "page_size": 16384}) == \
        "x86_64 (binaries built for aarch64), x, 16 KB pages"
