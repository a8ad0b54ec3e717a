"""The TUI screens shown in the guides are the snapshot tests' own SVGs
(tests/skillopt_tui/**/__snapshots__), copied into the build as `screens/<test file>/<test>.svg` (`[80x24]` becomes `-80x24`):
when a screen changes, its snapshot is updated and the guide shows the new one."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = ROOT / "tests" / "skillopt_tui"


def screens() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for svg in sorted(SNAPSHOTS.glob("**/__snapshots__/*/*.svg")):
        name = svg.name.replace("[", "-").replace("]", "")  # test_home[80x24] -> test_home-80x24
        out[f"screens/{svg.parent.name}/{name}"] = svg
    return out
