"""The documentation's claims about the command lines hold (README.md,
src/REFERENCE.md and its pages in src/reference/): every option they show is one a program accepts, both
option lists the reference prints in full are exactly the programs' --help,
and every `make X` they mention is a target of the Makefile.  (The formats
are checked in test_formats.py.)"""
import re
import subprocess
import sys

import pytest

OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


@pytest.fixture(scope="module")
def readme(root):
    """The README and the reference: its index and every page of it."""
    pages = [root / "README.md", root / "src" / "REFERENCE.md"] + sorted((root / "src" / "reference").glob("*.md"))
    return "\n".join(p.read_text() for p in pages)


def _help(cmd):
    r = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, (cmd, r.stderr)
    return r.stdout + r.stderr


def _opts(text):
    return set(OPT.findall(text))


def _section(readme, heading):
    return re.split(r"\n## ", readme.split("\n" + heading + "\n", 1)[1], maxsplit=1)[0]


def test_binary_options_block_is_the_help(readme, bin_dir):
    sec = _section(readme, "## Running one benchmark by hand")
    block = sec.split("```", 2)[1]
    helptext = _help([str(bin_dir / "lat_syscall")]).split("\nCases", 1)[0]
    assert _opts(block) == _opts(helptext)


def test_driver_option_table_is_the_help(readme, driver):
    sec = _section(readme, "## Running the suite: `kbench-run`")
    rows = [ln for ln in sec.splitlines() if ln.startswith("| `--")]
    documented = set()
    for ln in rows:
        documented |= _opts(ln.split("|")[1])
    # the options the help lists (each at the start of a line), --help aside
    listed = set(re.findall(r"^  (--[a-z][a-z0-9-]*)", _help([str(driver)]), re.M)) - {"--help"}
    assert documented == listed


def test_every_option_in_the_readme_exists(readme, bin_dir, driver, root):
    known = _opts(_help([str(bin_dir / "lat_syscall")])) | _opts(_help([str(driver)]))
    known |= _opts(_help([str(bin_dir / "kbench-campaign")]))
    for script in ("summarize", "compare", "plot", "report", "vm-run", "drift-prior", "bisect-step",
                   "lab/lava/lava-local", "lab/lava/kbench-lava-fetch"):
        known |= _opts(_help([sys.executable, str(root / "scripts" / script)]))
    # the test suite's own pytest options (tests/conftest.py)
    known |= set(re.findall(r'addoption\("(--[a-z][a-z0-9-]*)"', (root / "tests" / "conftest.py").read_text()))
    # options of other tools the README quotes (chromium, pytest, perf, apt-get, LAVA)
    foreign = {"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--print-to-pdf",
               "--no-install-recommends", "--result", "--measurement", "--units",  # apt-get, lava-test-case
               "--add-architecture",                                              # dpkg
               "--no-block", "--wait"}                                            # systemctl
    unknown = _opts(readme) - known - foreign
    assert not unknown, f"the documentation mentions options no kbench program accepts: {sorted(unknown)}"


def test_every_make_target_in_the_readme_exists(readme, root):
    targets = set(re.findall(r"\bmake ([a-z][a-z0-9-]*)\b", readme))
    assert {"run", "quick", "test", "report"} <= targets
    for t in sorted(targets):
        r = subprocess.run(["make", "-n", "-C", str(root), t], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "No rule to make target" not in r.stderr, (t, r.stderr)


def test_the_catalogue_lists_every_case(root, bin_dir):
    """The reference's table of cases (src/reference/benchmarks.md) names
    every binary and every variant its --list has (and nothing else)."""
    from bench_runner import list_cases
    sec = _section((root / "src" / "reference" / "benchmarks.md").read_text(), "## The cases")
    documented = {}
    for ln in sec.splitlines():
        if not ln.startswith("| `"):
            continue
        cells = re.split(r"(?<!\\)\|", ln)   # a cell may hold an escaped \|
        bench = re.findall(r"`(\w+)`", cells[1])[0]
        variants = re.sub(r"\([^)]*\)", "", cells[2]).split(";")[0]   # parameters aside
        words = set(re.findall(r"`(\w+)`", variants))
        documented.setdefault(bench, set()).update(words)
    listed = {}
    for p in sorted(bin_dir.iterdir()):
        if p.name.startswith("kbench-"):
            continue
        listed[p.name] = {c["variant"] for c in list_cases(bin_dir, p.name)}
    assert set(documented) == set(listed)
    for bench, variants in listed.items():
        assert variants <= documented[bench], (bench, sorted(variants - documented[bench]))


def test_make_install_installs_the_suite_and_the_scripts(root, tmp_path):
    """make install DESTDIR=... PREFIX=/usr: the driver, the binaries, the
    exec and fork helpers and the scripts, each runnable from PREFIX/bin."""
    r = subprocess.run(["make", "-C", str(root), "install", f"DESTDIR={tmp_path}", "PREFIX=/usr"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    usr = tmp_path / "usr"
    assert (usr / "lib/kbench/bin/lat_syscall").is_file()
    assert (usr / "lib/kbench/libexec/kbench-exec-helper").is_file()
    assert (usr / "lib/kbench/libexec/kbench-fork-helper").is_file()
    for name in ("run", "summarize", "compare", "plot", "report"):
        p = usr / "bin" / f"kbench-{name}"
        assert p.exists(), p
        h = subprocess.run([str(p), "--help"], capture_output=True, text=True, timeout=60)
        assert h.returncode == 0 and "usage" in (h.stdout + h.stderr).lower(), (name, h.stderr)
    # the drift prior travels with the scripts: an installed compare loads it
    assert (usr / "lib/kbench/scripts/kbench/model/drift_prior.json").is_file()
    h = subprocess.run([str(usr / "bin" / "kbench-drift-prior"), "--help"], capture_output=True, text=True,
                       timeout=60)
    assert h.returncode == 0, h.stderr
    fixture = root / "tests" / "data" / "runs" / "testhost"
    c = subprocess.run([str(usr / "bin" / "kbench-compare"), str(fixture / "6.1.0-base"), str(fixture / "6.6.0-new"),
                        "--boot", "100"], capture_output=True, text=True, timeout=120)
    assert c.returncode == 0 and "Run level (prior)" in c.stdout, c.stderr
