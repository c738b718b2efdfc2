"""The modules of the scripts' package and their imports, read from the
source with ast (tests/scripts/test_kb_imports.py, test_kb_layers.py).

A module is named by its dotted path inside the package: "cli",
"model.compare", "views.html"; a package's own __init__.py is "__init__",
"model.__init__", "views.__init__"."""
import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "kbench"


def modules(pkg=PKG):
    """{dotted name: path} of every module of the package."""
    out = {}
    for p in sorted(pkg.rglob("*.py")):
        rel = p.relative_to(pkg).with_suffix("")
        out[".".join(rel.parts)] = p
    return out


def _package_of(name):
    parts = name.split(".")
    return parts[:-1]


def _resolve(mods, parts, names):
    """The modules an import of `names` from the package or module `parts` reaches."""
    dotted = ".".join(parts)
    if dotted in mods:                       # from .model.load import X
        return {dotted}
    out = set()
    init = ".".join(parts + ["__init__"])
    for n in names:
        sub = ".".join(parts + [n])
        out.add(sub if sub in mods else init)
    return out


def imports(pkg=PKG):
    """{module: [(imported module, line, inside a function?)]} of the
    package's imports of its own modules, relative or absolute (kbench.x)."""
    mods = modules(pkg)
    out = {}
    for m, path in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        found = []

        def visit(node, local):
            for child in ast.iter_child_nodes(node):
                inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, ast.ImportFrom):
                    names = [a.name for a in child.names]
                    if child.level:
                        base = _package_of(m)
                        if child.level > 1:
                            base = base[:len(base) - (child.level - 1)]
                        parts = base + (child.module.split(".") if child.module else [])
                    elif (child.module or "").split(".")[0] == "kbench":
                        parts = child.module.split(".")[1:]
                    else:
                        continue
                    for t in _resolve(mods, parts, names):
                        found.append((t, child.lineno, local))
                elif isinstance(child, ast.Import):
                    for a in child.names:
                        if a.name.startswith("kbench."):
                            found.append((_resolve(mods, a.name.split(".")[1:], [])
                                          and a.name.split(".", 1)[1], child.lineno, local))
                visit(child, inner)

        visit(tree, False)
        out[m] = [(t, line, local) for t, line, local in found if t != m]
    return out


def layer(name):
    """'model', 'views' or 'cli' (everything at the top: cli, bisect, __init__)."""
    first = name.split(".")[0]
    return first if first in ("model", "views") else "cli"
