"""The modules of scripts/kbench import each other without a circle (issue
30 item 7): read from their source with ast, every relative import counts,
the ones inside functions too (a deferred import only hides a circle until
the day the import moves to the top of its module)."""
import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "kbench"


def import_graph(pkg):
    """{module: {modules it imports}} of the package's modules; a name
    imported from the package itself (`from . import SUPPORTED_SCHEMA`)
    is an edge to __init__."""
    mods = {p.stem for p in pkg.glob("*.py")}
    graph = {}
    for m in sorted(mods):
        tree = ast.parse((pkg / f"{m}.py").read_text(), filename=f"{m}.py")
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name if a.name in mods else "__init__" for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("kbench"):
                parts = node.module.split(".")
                deps.add(parts[1] if len(parts) > 1 else "__init__")
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("kbench."):
                        deps.add(a.name.split(".")[1])
        deps.discard(m)
        graph[m] = deps
    return graph


def find_cycle(graph, skip=()):
    """One circle of the graph as a list of modules (first == last), or None."""
    state = {}

    def visit(m, path):
        state[m] = "open"
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if d in skip:
                continue
            if state.get(d) == "open":
                return path[path.index(d):] + [d]
            if d not in state:
                found = visit(d, path)
                if found:
                    return found
        path.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state and m not in skip:
            found = visit(m, [])
            if found:
                return found
    return None


def test_the_scripts_import_no_circle():
    graph = import_graph(PKG)
    assert {"compare", "decl", "load", "plot", "scaling", "summary"} <= set(graph)
    # __init__ is always imported first and imports no module at its top
    # level (checked below): a name taken from it closes no circle.
    cycle = find_cycle(graph, skip={"__init__"})
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_package_init_imports_no_module_at_its_top_level():
    tree = ast.parse((PKG / "__init__.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level == 1]
    assert top == []


def test_ordering_lives_with_the_declarations():
    graph = import_graph(PKG)
    for m in ("plot", "strips", "summary", "html"):
        assert "decl" in graph[m]
    assert graph["decl"] <= {"legacy"}          # the bottom of the package


@pytest.mark.parametrize("graph, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": set(), "c": {"a", "b"}}, None),
    ({"plot": {"scaling"}, "scaling": {"plot"}}, ["plot", "scaling", "plot"]),
])
def test_find_cycle(graph, cycle):
    assert find_cycle(graph) == cycle


def test_the_graph_reads_deferred_imports(tmp_path):
    (tmp_path / "__init__.py").write_text("X = 1\n")
    (tmp_path / "a.py").write_text("from . import X\n\ndef f():\n    from .b import g\n    return g\n")
    (tmp_path / "b.py").write_text("from . import a\n")
    graph = import_graph(tmp_path)
    assert graph == {"__init__": set(), "a": {"__init__", "b"}, "b": {"a"}}
    assert find_cycle(graph, skip={"__init__"}) == ["a", "b", "a"]
