"""sleep/ is laid out by stage so a newcomer can tell which files are theirs: each room
says what it takes and gives, and imports run one way (night → mine → harvest → redact,
state read by all). A room importing backwards is how a flat folder grows back."""

from __future__ import annotations

import ast
from pathlib import Path

SLEEP = Path(__file__).resolve().parents[2] / "sleep"
ROOMS = ("harvest", "mine", "night", "state", "redact", "prompts")
# The rooms each room may import; every room may read state (and prompts are data).
MAY_IMPORT = {
    "state": set(),
    "redact": {"state"},
    "prompts": set(),
    "harvest": {"redact", "state"},
    "mine": {"harvest", "redact", "state", "prompts"},
    "night": {"mine", "harvest", "redact", "state", "prompts"},
}


def _sleep_imports(path: Path, root: Path = SLEEP) -> set[str]:
    """The sleep modules a file imports, lazy (inside functions) and relative ones too."""
    package = ["sleep", *path.relative_to(root).parent.parts]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return {m for m in found if m.startswith("sleep.")}


def test_sleep_top_level_holds_only_its_rooms_and_the_night_yaml():
    loose = sorted(
        p.name
        for p in SLEEP.iterdir()
        if p.name not in ("__init__.py", "night.yaml", "__pycache__") and p.name not in ROOMS
    )
    assert loose == [], f"put these in a room of sleep/: {loose}"


def test_every_room_says_what_it_takes_and_gives():
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((SLEEP / room / "__init__.py").read_text("utf-8")))
        assert doc and len(doc) > 40, f"sleep/{room}/__init__.py needs a docstring"


def test_imports_run_one_way_between_rooms():
    backwards = []
    for room in ROOMS:
        for path in sorted((SLEEP / room).rglob("*.py")):
            for module in sorted(_sleep_imports(path)):
                target = module.split(".")[1]
                if target in ROOMS and target != room and target not in MAY_IMPORT[room]:
                    backwards.append(f"{path.relative_to(SLEEP.parent)} imports {module}")
    assert backwards == []


def test_the_room_check_sees_lazy_and_relative_imports(tmp_path):
    """The check above must be able to fail: a function-level import and a relative one
    are both seen."""
    fake = tmp_path / "sleep"
    (fake / "state").mkdir(parents=True)
    module = fake / "state" / "x.py"
    module.write_text("def f():\n    from sleep.night.run import Night\n    from ..mine import tasks\n")
    assert {"sleep.night.run", "sleep.mine", "sleep.mine.tasks"} <= _sleep_imports(module, fake)
