"""The import graph of engine/, gui/ and qiao/: no circles, and no import from a lower layer to a higher one.

A circle means neither module can be read, tested or moved without the other (three existed at cd519ae:
engine/store/locate.py <-> engine/store/installed.py, gui/window/main_window.py <-> gui/window/session_store.py,
gui/quick/shortcut*.py),
and an edge running back up (gui/desktop/api_host.py importing from engine/cli/serve.py) ties a lower layer to a higher
one.
The graph is read with `ast`, so a lazy import inside a function counts as much as one at the top; an import only
under `if TYPE_CHECKING:` does not (it never runs). The figures (modules, edges, levels) are printed: run with -s.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "gui", "qiao")
LAYERS = {"qiao": 2, "gui": 1, "engine": 0}  # an edge may only go from a higher number to a lower or equal one
QT = ("PySide6", "shiboken6")


@dataclass
class Graph:
    """Modules (dotted names) and the internal modules each imports."""

    edges: dict[str, set[str]] = field(default_factory=dict)

    @property
    def modules(self) -> list[str]:
        return sorted(self.edges)

    def edge_count(self) -> int:
        return sum(len(targets) for targets in self.edges.values())

    def restricted(self, prefix: str) -> Graph:
        """The subgraph of the modules under `prefix` ("engine"), edges leaving it dropped."""
        inside = {m for m in self.edges if _under(m, prefix)}
        return Graph({m: {t for t in self.edges[m] if t in inside} for m in inside})


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run: at module level, in functions and classes, but not under
    `if TYPE_CHECKING:` (its `else:` branch does run)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def imported_names(path: Path, module: str) -> list[str]:
    """The absolute names `path`'s imports name: `import a.b` names `a.b`, `from a import b` names `a.b` (b may be
    a submodule or a name defined in a; `resolve` tells which)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    names: list[str] = []
    for node in _import_nodes(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
            continue
        base = node.module or ""
        if node.level:
            anchor = module.split(".")
            if not is_package:
                anchor = anchor[:-1]
            anchor = anchor[: len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([base] if base else []))
        names += [f"{base}.{alias.name}" for alias in node.names]
    return names


def resolve(name: str, modules: Iterable[str]) -> str | None:
    """The module `name` lands in: itself, else its longest prefix that is a module (`engine.x.Name` -> engine.x);
    None when outside the packages."""
    known = set(modules)
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def build_graph(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> Graph:
    """The graph of every module under `packages`: an edge per internal module imported. A parent package's
    __init__ that runs on the way (`import engine.a` runs engine/__init__.py) is not an edge, and self-edges are
    dropped."""
    paths = {module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}
    graph = Graph({m: set() for m in paths})
    for module, path in paths.items():
        for name in imported_names(path, module):
            target = resolve(name, paths)
            if target is not None and target != module:
                graph.edges[module].add(target)
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each as one concrete circle
    a -> b -> ... -> a through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph.edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(_circle_in(graph, set(component)))

    for module in graph.modules:
        if module not in index:
            visit(module)
    return sorted(found)


def _circle_in(graph: Graph, component: set[str]) -> list[str]:
    """One circle through the component's first module, found by breadth-first search back to it."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph.edges[node] & component):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no circle in {sorted(component)}")


def levels(graph: Graph) -> int:
    """The number of import levels: the longest chain of imports, in modules (a module importing nothing internal
    is level 1). The modules of a circle count as one."""
    merged: dict[str, str] = {}
    for circle in circles(graph):
        for member in circle:
            merged[member] = circle[0]
    depth: dict[str, int] = {}

    def level(module: str, seen: frozenset[str]) -> int:
        module = merged.get(module, module)
        if module in depth:
            return depth[module]
        members = [m for m, head in merged.items() if head == module] or [module]
        targets = {merged.get(t, t) for m in members for t in graph.edges[m]} - {module}
        depth[module] = 1 + max((level(t, seen | {module}) for t in targets if t not in seen), default=0)
        return depth[module]

    return max((level(m, frozenset()) for m in graph.modules), default=0)


# The floors inside each package: a module may import its own subpackage, the ground floor (the package's root
# modules: the vocabulary both sides speak) and any subpackage on a lower floor; never a sibling on its own floor
# nor one above. The longest matching prefix names a module's floor.
FLOORS = {
    "engine": {
        "engine": 0,  # errors, options, results, languages, glossary, paths, ...: the request vocabulary
        "engine.bundle": 1,
        "engine.history": 1,
        "engine.runtime": 1,
        "engine.text": 1,
        # the registry (family names, loaded by name) and the seam the searches see (start/step/reorder/select):
        # vocabulary, importing nothing but the ground floor; engine.bundle checks a manifest's family against it
        "engine.families": 0,
        "engine.families.base": 0,
        "engine.families.*": 2,  # each family's folder (engine.families.marian, ...): one floor, whatever its name
        "engine.store": 2,
        "engine.documents": 2,
        "engine.search": 3,
        "engine.pipeline": 4,
        "engine.convert": 5,
        "engine.api": 6,
        "engine.cli": 7,
    },
    "gui": {
        "gui": 0,  # settings, wording, fonts, theme, the sentence model: shared by every feature
        "gui.i18n": 0,
        "gui.worker": 1,
        "gui.quick": 1,
        "gui.records": 2,
        "gui.models": 2,
        "gui.documents": 2,
        "gui.review": 2,
        "gui.desktop": 2,
        "gui.preferences": 3,
        "gui.window": 4,
        "gui.app": 5,  # the composition root: wires every feature
    },
    "qiao": {"qiao": 0},
}


def floor_of(module: str) -> tuple[str, int]:
    """The (floor name, floor number) of `module`: its longest prefix in FLOORS; a root module of a package is on
    the package's own floor (engine.options -> ("engine", 0)) unless FLOORS names it. `a.b.*` names every module
    strictly under `a.b` that no longer entry names (engine.families.marian.model -> ("engine.families.*", 2))."""
    table = FLOORS[module.split(".")[0]]
    parts = module.split(".")
    while parts:
        name = ".".join(parts)
        if name in table:
            return name, table[name]
        parts.pop()
        wildcard = ".".join(parts) + ".*"
        if parts and wildcard in table:
            return wildcard, table[wildcard]
    raise AssertionError(f"no floor for {module}")


# Of the families package, the searches see only the seam (engine.families.base): never a family's own modules nor
# the registry that loads them. Outside the families package only the converter (engine.convert, build time) may
# import a family's folder; everything else goes through the registry.
SEARCH = "engine.search"
FAMILIES = "engine.families"
FAMILY_SEAM = "engine.families.base"
FAMILY_IMPORTERS = ("engine.families", "engine.convert")


def family_edges(graph: Graph) -> list[str]:
    """Every import that reaches past the family seam: engine.search importing anything of engine.families but
    engine.families.base, and a module outside FAMILY_IMPORTERS importing a family's folder."""
    found = []
    for module, targets in sorted(graph.edges.items()):
        for target in sorted(targets):
            if not _under(target, FAMILIES) or target == FAMILY_SEAM:
                continue
            if _under(module, SEARCH):
                found.append(f"{module} -> {target} (the searches see a model only through {FAMILY_SEAM})")
            elif target != FAMILIES and not any(_under(module, p) for p in FAMILY_IMPORTERS):
                found.append(f"{module} -> {target} (a family is loaded through the registry, {FAMILIES})")
    return found


def reversed_edges(graph: Graph) -> list[str]:
    """Every import that runs back up: engine -> gui/qiao, gui -> qiao, gui -> the engine's CLI (only qiao/, the
    mode dispatcher, runs it), and inside a package any import of a sibling subpackage on the same floor or of one
    on a higher floor (FLOORS)."""
    found = []
    for module, targets in sorted(graph.edges.items()):
        for target in sorted(targets):
            top, target_top = module.split(".")[0], target.split(".")[0]
            if LAYERS[target_top] > LAYERS[top]:
                found.append(f"{module} -> {target} ({top} is below {target_top})")
            elif top == "gui" and _is_engine_cli(target):
                found.append(f"{module} -> {target} (the engine's CLI is an entry point, not a library)")
            elif top == target_top:
                (here, n), (there, m) = floor_of(module), floor_of(target)
                if here != there and (m > n or (m == n and m > 0)):
                    found.append(f"{module} -> {target} ({here} is on floor {n}, {there} on floor {m})")
    return found


def _is_engine_cli(module: str) -> bool:
    return _under(module, "engine.cli")


def qt_imports(root: Path = ROOT) -> list[str]:
    """Every Qt import anywhere in engine/ (the build pipeline included), lazy ones too."""
    found = []
    for path in sorted((root / "engine").rglob("*.py")):
        for name in imported_names(path, module_name(path, root)):
            if name.split(".")[0] in QT:
                found.append(f"{module_name(path, root)}: {name}")
    return found


def figures(graph: Graph) -> str:
    parts = [f"all: {len(graph.modules)} modules, {graph.edge_count()} edges, {levels(graph)} levels"]
    for pkg in PACKAGES:
        sub = graph.restricted(pkg)
        parts.append(
            f"{pkg}/: {len(sub.modules)} modules, {sub.edge_count()} edges, {levels(sub)} levels, "
            f"{len(circles(sub))} circles"
        )
    return "; ".join(parts)


# -- the rules ----------------------------------------------------------------------------------------------------


def test_no_import_circles():
    graph = build_graph()
    print(f"\nimport graph: {figures(graph)}")
    found = circles(graph)
    assert found == [], "import circles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_runs_back_up():
    assert reversed_edges(build_graph()) == []


def test_the_engine_never_imports_qt():
    assert qt_imports() == []


def test_families_are_reached_only_through_the_seam_and_the_registry():
    assert family_edges(build_graph()) == []


# -- the scan itself ----------------------------------------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_a_lazy_import_counts_and_a_type_checking_one_does_not(tmp_path):
    root = _tree(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engine import b\n",
            "engine/b.py": "def f():\n    from engine.a import x\n",
            "engine/c.py": "from . import b\nfrom .b import f\n",
        },
    )
    graph = build_graph(root, ["engine"])
    assert graph.edges == {"engine": set(), "engine.a": set(), "engine.b": {"engine.a"}, "engine.c": {"engine.b"}}
    assert circles(graph) == []
    assert levels(graph) == 3


def test_a_circle_is_reported_with_its_path(tmp_path):
    root = _tree(
        tmp_path,
        {
            "gui/__init__.py": "",
            "gui/a.py": "import gui.b\n",
            "gui/b.py": "def f():\n    from gui import c\n",
            "gui/c.py": "from gui.a import x\n",
            "gui/d.py": "from gui.a import x\n",
        },
    )
    graph = build_graph(root, ["gui"])
    assert circles(graph) == [["gui.a", "gui.b", "gui.c", "gui.a"]]
    assert levels(graph) == 2  # d -> the circle, counted once


def test_an_edge_back_up_is_reported(tmp_path):
    root = _tree(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/cli/serve.py": "def read_key(): ...\n",
            "engine/decoder.py": "from engine.cli.serve import read_key\n",
            "engine/api/__init__.py": "",
            "engine/api/app.py": "from engine.cli.serve import read_key\n",
            "engine/store/installed.py": "from gui.window import W\nfrom engine.families.marian import M\n",
            "engine/families/marian.py": "from engine.families.base import Model\n",
            "engine/families/base.py": "from engine.errors import E\n",
            "engine/errors.py": "",
            "engine/search/decoding.py": "from engine.families.base import Model\nfrom engine.text import x\n",
            "engine/text/__init__.py": "from engine.search.decoding import y\n",
            "gui/__init__.py": "",
            "gui/window.py": "from engine.cli.serve import read_key\nimport PySide6\n",
        },
    )
    found = reversed_edges(build_graph(root, ["engine", "gui"]))
    assert found == [
        "engine.api.app -> engine.cli.serve (engine.api is on floor 6, engine.cli on floor 7)",
        "engine.decoder -> engine.cli.serve (engine is on floor 0, engine.cli on floor 7)",
        "engine.store.installed -> engine.families.marian (engine.store is on floor 2, engine.families.* on floor 2)",
        "engine.store.installed -> gui.window (engine is below gui)",
        "engine.text -> engine.search.decoding (engine.text is on floor 1, engine.search on floor 3)",
        "gui.window -> engine.cli.serve (the engine's CLI is an entry point, not a library)",
    ]


def test_an_edge_past_the_family_seam_is_reported(tmp_path):
    root = _tree(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/families/__init__.py": "from engine.families.base import Model\n",
            "engine/families/base.py": "",
            "engine/families/marian/__init__.py": "from engine.families.marian.model import M\n",
            "engine/families/marian/model.py": "from engine.families.base import Model\n",
            "engine/search/decoding.py": "from engine.families.base import M\nfrom engine.families.marian import m\n",
            "engine/search/batch.py": "from engine import families\n",
            "engine/pipeline/translator.py": "from engine import f\nfrom engine.families.marian.model import M\n",
            "engine/convert/pipeline.py": "from engine.families.marian.model import M\n",
        },
    )
    graph = build_graph(root, ["engine"])
    assert family_edges(graph) == [
        "engine.pipeline.translator -> engine.families.marian.model (a family is loaded through the registry, "
        "engine.families)",
        "engine.search.batch -> engine.families (the searches see a model only through engine.families.base)",
        "engine.search.decoding -> engine.families.marian (the searches see a model only through engine.families.base)",
    ]
    assert floor_of("engine.families.marian.model") == ("engine.families.*", 2)
    assert floor_of("engine.families.base") == ("engine.families.base", 0)
    assert floor_of("engine.families") == ("engine.families", 0)
