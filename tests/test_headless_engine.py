"""The engine is headless (DESIGN §2): core/, envs/ and sleep/ never import textual, typer
or skillopt_tui, at module level or inside a function. Checked on the source with ast, so
a lazy import cannot hide."""

from __future__ import annotations

import ast
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
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
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
