"""Imports in benchmarks/ run one way: no module imports one that imports it back, directly or
through others, whether a module or a folder of them (probes/, corpus/) is the unit. Read from
the source with `ast` (imports inside functions count too), nothing imported."""

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def module_names(root: Path) -> dict[str, Path]:
    """Every module under `root` (a package), dotted from the package's name."""
    names = {}
    for path in root.rglob("*.py"):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of `known` that module `name` (at `path`) imports."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in known}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if submodule in known else target)
    return (found & set(known)) - {name}


def import_graph(root: Path, unit=lambda name: name) -> dict[str, set[str]]:
    """unit(importer) -> unit(imported) for every import between two different units."""
    known = module_names(root)
    graph: dict[str, set[str]] = {unit(name): set() for name in known}
    for name, path in known.items():
        graph[unit(name)] |= {unit(other) for other in imported(name, path, known)} - {unit(name)}
    return graph


def folder(name: str) -> str:
    """A module's unit when a folder of modules counts as one: benchmarks.probes.probe ->
    benchmarks.probes."""
    return ".".join(name.split(".")[:2])


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of `graph` as the path around it, or [] when it has none."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == "open":
                return path[path.index(other) :] + [other]
            if other not in state and (found := visit(other)):
                return found
        state[node] = "done"
        path.pop()
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_module_of_benchmarks_imports_one_that_imports_it_back():
    graph = import_graph(BENCHMARKS)
    assert "benchmarks.compiled" in graph["benchmarks.attribution"]  # the graph reads imports
    assert a_cycle(graph) == []


def test_no_folder_of_benchmarks_imports_one_that_imports_it_back():
    graph = import_graph(BENCHMARKS, folder)
    assert "benchmarks.attribution" in graph["benchmarks.probes"]
    assert a_cycle(graph) == []


def test_a_cycle_is_found_where_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert a_cycle(graph) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) == []
