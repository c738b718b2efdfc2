"""The scripts' package in layers (issue 43 item 5): model/ (plain data in
and out), views/ over it, cli on top.  Read from the source with ast:
arrows only point down the layers, imports sit at the top of their
modules (a function-local import of the package usually hides an arrow
going the wrong way), and no module grows past MAX_LINES."""
import pytest

from kb_modules import PKG, imports, layer, modules

MAX_LINES = 700
MAX_LOCAL = 5          # function-local imports of the package's own modules (matplotlib's charts: lazy)
RANK = {"model": 0, "views": 1, "cli": 2}


def upward(pkg):
    """[(module, imported module, line)] of the imports that point up the
    layers: model -> views or cli, views -> cli."""
    return [(m, t, line) for m, deps in imports(pkg).items() for t, line, _ in deps
            if RANK[layer(t)] > RANK[layer(m)] and not t.endswith("__init__") or
            (layer(m) != "cli" and t == "__init__")]


def local_imports(pkg):
    return [(m, t, line) for m, deps in imports(pkg).items() for t, line, local in deps if local]


def long_modules(pkg, limit=MAX_LINES):
    return {m: n for m, p in modules(pkg).items() if (n := len(p.read_text().splitlines())) > limit}


def test_the_layers_exist():
    mods = modules(PKG)
    assert {"cli", "model.load", "model.stats", "model.compare", "model.drift", "views.html"} <= set(mods)
    assert (PKG / "model" / "drift_prior.json").is_file()


def test_no_arrow_points_up_the_layers():
    assert upward(PKG) == []


def test_few_function_local_imports():
    found = local_imports(PKG)
    assert len(found) <= MAX_LOCAL, found


def test_no_module_is_too_long():
    assert long_modules(PKG) == {}


# The checks themselves, on a planted package: each fails on its violation.

def _write(root, files):
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


@pytest.mark.parametrize("rel, text, arrow", [
    ("model/a.py", "from ..views import v\n", ("model.a", "views.v")),
    ("model/a.py", "from .. import cli\n", ("model.a", "cli")),
    ("model/a.py", "from kbench.views.v import f\n", ("model.a", "views.v")),
    ("views/v.py", "from ..cli import main\n", ("views.v", "cli")),
    ("model/a.py", "def f():\n    from ..views.v import g\n    return g\n", ("model.a", "views.v")),
])
def test_an_upward_import_is_found(tmp_path, rel, text, arrow):
    base = {"__init__.py": "", "cli.py": "from .model import a\n", "model/__init__.py": "",
            "model/a.py": "", "views/__init__.py": "", "views/v.py": "from ..model import a\n"}
    _write(tmp_path, {**base, rel: text})
    assert [(m, t) for m, t, _ in upward(tmp_path)] == [arrow]


def test_downward_imports_are_not_counted(tmp_path):
    _write(tmp_path, {"__init__.py": "", "cli.py": "from .model import a\nfrom .views import v\n",
                      "model/__init__.py": "", "model/a.py": "from . import b\n", "model/b.py": "",
                      "views/__init__.py": "", "views/v.py": "from ..model import a\nfrom . import w\n",
                      "views/w.py": ""})
    assert upward(tmp_path) == []
    assert local_imports(tmp_path) == []


def test_local_imports_and_long_modules_are_counted(tmp_path):
    _write(tmp_path, {"__init__.py": "", "model/__init__.py": "", "model/b.py": "",
                      "model/a.py": "import json\n\ndef f():\n    import re\n    from . import b\n    return b\n"
                                    "\n\nclass C:\n    def g(self):\n        from .b import x\n",
                      "views/__init__.py": "", "views/v.py": "x = 1\n" * 8})
    assert [(m, t) for m, t, _ in local_imports(tmp_path)] == [("model.a", "model.b"), ("model.a", "model.b")]
    assert long_modules(tmp_path, limit=8) == {"model.a": 11}
    assert long_modules(tmp_path, limit=7) == {"model.a": 11, "views.v": 8}
    assert long_modules(tmp_path, limit=11) == {}
