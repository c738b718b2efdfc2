"""The modules of scripts/kbench import each other without a circle (issue
30 item 7): read from their source with ast, every import of the package's
own modules counts, the ones inside functions too (a deferred import only
hides a circle until the day the import moves to the top of its module)."""
import ast

import pytest

from kb_modules import PKG, imports


def import_graph(pkg):
    """{module: {modules it imports}} of the package's modules (dotted
    names: "model.compare"); a name imported from a package itself
    (`from .defaults import X` aside, `from . import X` of a non-module)
    is an edge to that package's __init__."""
    return {m: {t for t, _, _ in deps} for m, deps in imports(pkg).items()}


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
    assert {"model.compare", "model.decl", "model.load", "views.plot", "model.scaling", "model.summary"} <= set(graph)
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def test_the_package_init_imports_no_module_but_deps_and_defaults():
    """scripts/NAME imports kbench before its guard can say what is missing:
    the package's __init__ imports only deps and model.defaults at its top
    level, and they import nothing but sys."""
    tree = ast.parse((PKG / "__init__.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.level >= 1]
    assert [n.module for n in top] == ["deps", "model.defaults"]
    for path in (PKG / "deps.py", PKG / "model" / "defaults.py"):
        tree = ast.parse(path.read_text())
        names = [a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names]
        assert names in ([], ["sys"]), (path, names)


def test_ordering_lives_with_the_declarations():
    graph = import_graph(PKG)
    for m in ("views.plot", "views.strips", "model.summary", "views.html"):
        assert "model.decl" in graph[m], m
    assert graph["model.decl"] <= {"model.legacy"}          # the bottom of the package


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
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "__init__.py").write_text("")
    (tmp_path / "sub" / "c.py").write_text("from .. import a\nfrom ..b import y\nfrom . import d\n")
    (tmp_path / "sub" / "d.py").write_text("from kbench.sub import c\n")
    graph = import_graph(tmp_path)
    assert graph == {"__init__": set(), "a": {"__init__", "b"}, "b": {"a"}, "sub.__init__": set(),
                     "sub.c": {"a", "b", "sub.d"}, "sub.d": {"sub.c"}}
    assert find_cycle(graph, skip={"__init__"}) == ["a", "b", "a"]
    assert find_cycle({k: v for k, v in graph.items() if k not in ("a", "b")}) == ["sub.c", "sub.d", "sub.c"]
