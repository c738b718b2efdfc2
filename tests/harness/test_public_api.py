"""The public harness API: a benchmark file includes only the public headers.

src/harness/*.hpp is what a benchmark author uses (bench, sys, ipc, memory,
files); src/harness/internal/ is the runner's (options, cases, calibration,
counters, JSON, affinity, cleanup, ...). A benchmark that reaches into the
runner breaks the moment the runner changes, so every quoted #include of
src/bench/*.cpp must name a public header, and the public headers must not
pull an internal one in behind its back.
"""
import re

import pytest

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def public_headers(root):
    return sorted(f"harness/{p.name}" for p in (root / "src" / "harness").glob("*.hpp"))


def quoted_includes(path):
    return INCLUDE.findall(path.read_text())


def test_the_public_headers_are_the_benchmark_api(root):
    assert public_headers(root) == ["harness/bench.hpp", "harness/files.hpp", "harness/ipc.hpp",
                                    "harness/memory.hpp", "harness/sys.hpp"]


@pytest.mark.parametrize("kind", ["bench", "public header"])
def test_only_public_headers_are_included(root, kind):
    public = set(public_headers(root))
    if kind == "bench":
        files = sorted((root / "src" / "bench").glob("*.cpp"))
    else:
        files = sorted((root / "src" / "harness").glob("*.hpp"))
    assert files
    bad = [f"{f.relative_to(root)}: #include \"{inc}\""
           for f in files for inc in quoted_includes(f) if inc not in public]
    assert not bad, "internal or unknown headers included:\n" + "\n".join(bad)


def test_the_check_sees_an_internal_include(tmp_path):
    f = tmp_path / "x.cpp"
    f.write_text('#include <vector>\n#include "harness/bench.hpp"\n  #  include "harness/internal/affinity.hpp"\n')
    assert quoted_includes(f) == ["harness/bench.hpp", "harness/internal/affinity.hpp"]
