"""The rules of the house (DESIGN §2), checked on the source with ast so a lazy import
cannot hide: core/, envs/ and sleep/ never import textual, typer or skillopt_tui; core/
never imports envs/ or sleep/ (they implement contracts the engine defines); and no module
of core/, envs/ or sleep/ takes part in an import circle. Every import statement counts,
wherever it stands (module level, `if TYPE_CHECKING:`, inside a function), and so does
`importlib.import_module("name")`: a lazy import only moves a circle to run time."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ("core", "envs", "sleep")
FORBIDDEN = ("textual", "typer", "skillopt_tui")


def imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", ""))
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def test_engine_packages_never_import_a_face():
    offenders = []
    files = [p for pkg in ENGINE for p in (ROOT / pkg).rglob("*.py")]
    assert len(files) > 10  # the scan really looks at the engine
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            if module.split(".")[0] in FORBIDDEN:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert offenders == []


def test_the_scanner_sees_lazy_and_dynamic_imports():
    source = (
        "def f():\n    import textual.app\n"
        "from typer import Typer\n"
        "import importlib\nimportlib.import_module('skillopt_tui.cli')\n"
    )
    modules = [m for _, m in imported_modules(ast.parse(source))]
    assert {"textual.app", "typer", "skillopt_tui.cli"} <= set(modules)


def test_core_never_imports_envs_or_sleep():
    offenders = []
    files = list((ROOT / "core").rglob("*.py"))
    assert len(files) > 30
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, module in imported_modules(tree):
            if module.split(".")[0] in ("envs", "sleep"):
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert offenders == []


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def engine_imports(tree: ast.Module, name: str, known: set[str]) -> set[str]:
    """The engine modules that importing `name` may load, from every import statement in
    its source, wherever it stands. Names resolve by their dotted path, so the graph is the
    same whatever folders the packages have: `from pkg import sub` names the submodule
    when it is one, a relative import is resolved against the module's package, and an
    import of `a.b.c` also runs the `__init__` of `a` and `a.b` (unless the importer is
    inside them: then they are loaded already)."""
    found: set[str] = {module for _, module in imported_modules(tree)}
    package = (
        name
        if name in known and any(k.startswith(name + ".") for k in known)
        else name.rpartition(".")[0]
    )
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            for alias in node.names:
                found.add(f"{base}.{alias.name}")
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
    loaded = set()
    for module in found:
        parts = module.split(".")
        loaded.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {m for m in loaded if m in known and m not in own}


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    files = {module_name(root, p): p for pkg in packages for p in (root / pkg).rglob("*.py")}
    known = set(files)
    return {
        name: engine_imports(ast.parse(path.read_text(encoding="utf-8")), name, known)
        for name, path in files.items()
    }


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), sorted."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_no_import_cycles_in_the_engine():
    graph = import_graph(ROOT, ENGINE)
    assert len(graph) > 40
    assert find_cycles(graph) == []


def test_the_cycle_finder_sees_type_checking_and_package_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import X\n"
    )
    (pkg / "c.py").write_text("X = 1\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"} and graph["pkg.c"] == set()
    assert find_cycles(graph) == [["pkg.a", "pkg.b"]]


def test_the_cycle_finder_sees_lazy_relative_and_dynamic_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")  # lazy and relative
    (pkg / "c.py").write_text("import pkg.d\n")
    (pkg / "d.py").write_text(
        "import importlib\ndef g():\n    return importlib.import_module('pkg.c')\n"
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.b"] == {"pkg.a"} and graph["pkg.d"] == {"pkg.c"}
    assert find_cycles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.d"]]


def test_the_cycle_finder_resolves_modules_by_name_in_any_layout(tmp_path):
    """A circle through a subpackage's `__init__`: importing `pkg.room.z` runs
    `pkg/room/__init__.py` first, which imports `pkg.room.x`, which imports `pkg.y`."""
    room = tmp_path / "pkg" / "room"
    room.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (room / "__init__.py").write_text("from pkg.room.x import X\n")
    (room / "x.py").write_text("from pkg.y import Y\nX = Y\n")
    (room / "z.py").write_text("from pkg.room import x\n")  # its own package: no edge up
    (tmp_path / "pkg" / "y.py").write_text("Y = 1\ndef later():\n    from pkg.room.z import x\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.y"] == {"pkg.room", "pkg.room.z"}
    assert graph["pkg.room.z"] == {"pkg.room.x"}
    assert find_cycles(graph) == [["pkg.room", "pkg.room.x", "pkg.room.z", "pkg.y"]]
