"""scripts/vmrun, vm-run's modules (issue 43 item 6): each imports only the
modules its package's docstring lists before it (so no circle, and the
lower layers, which lava-local and kbench-lava-fetch import too, never
pull in the command line), none of them inside a function; no module over
700 lines; main at most 60; scripts/vm-run only calls it."""
import ast
import pathlib
import re

PKG = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "vmrun"


def layers():
    """The modules in the order the package's docstring lists them."""
    doc = ast.get_docstring(ast.parse((PKG / "__init__.py").read_text()))
    return re.findall(r"^  ([a-z_]+)\s", doc, re.M)


def imports(path):
    """[(module of the package, line, inside a function?)] of one module."""
    tree = ast.parse(path.read_text())
    inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if n is not f}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            out += [(n.split(".")[0], node.lineno, id(node) in inner) for n in names]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out += [(m.split(".")[1], node.lineno, id(node) in inner) for m in mods if m.startswith("vmrun.")]
    return out


def test_every_module_is_listed_and_imports_only_those_before_it():
    order = layers()
    assert sorted(order) == sorted(p.stem for p in PKG.glob("*.py") if p.stem != "__init__")
    for i, m in enumerate(order):
        for dep, line, local in imports(PKG / f"{m}.py"):
            assert dep in order[:i], f"vmrun/{m}.py:{line} imports {dep}, not listed before it"
            assert not local, f"vmrun/{m}.py:{line} imports {dep} inside a function"


def test_sizes():
    for p in PKG.glob("*.py"):
        assert len(p.read_text().splitlines()) <= 700, p.name
    tree = ast.parse((PKG / "cli.py").read_text())
    main = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "main")
    assert main.end_lineno - main.lineno + 1 <= 60
    entry = (PKG.parent / "vm-run").read_text()
    assert len(entry.splitlines()) <= 40 and "from vmrun.cli import main" in entry
