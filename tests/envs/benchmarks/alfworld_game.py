"""A small real ALFWorld game, made by us at test time in the published game-file format.

A `game.tw-pddl` file is JSON: ALFWorld's PDDL domain and text grammar (both ship inside
the `alfworld` package), the grammar's "UNKNOWN GOAL" replaced by the task sentence, and a
PDDL problem in ALFRED's naming (`Pen_bar__plus_00_dot_10...` demangles to "pen 1"). The
problem below is ours: one agent, a desk holding a pen, a closed drawer; the goal is the
pen in the drawer. Nothing of ALFWorld's data is vendored: the domain and grammar are read
from the installed package.
"""

from __future__ import annotations

import json
from pathlib import Path

PEN = "Pen_bar__plus_00_dot_10_bar__plus_00_dot_80_bar__plus_00_dot_20"
DESK = "Desk_bar__plus_01_dot_00_bar__plus_00_dot_00_bar__plus_01_dot_00"
DRAWER = "Drawer_bar__plus_02_dot_00_bar__plus_00_dot_50_bar__plus_01_dot_00"
START, AT_DESK, AT_DRAWER = (
    "loc_bar_0_bar_0_bar_0_bar_0",
    "loc_bar_1_bar_1_bar_0_bar_0",
    "loc_bar_2_bar_1_bar_0_bar_0",
)

PROBLEM = f"""(define (problem plan_skillopt_pen_in_drawer)
(:domain alfred)
(:objects
agent1 - agent
Pen - object
PenType - otype
DeskType - rtype
DrawerType - rtype
{PEN} - object
{DESK} - receptacle
{DRAWER} - receptacle
{START} - location
{AT_DESK} - location
{AT_DRAWER} - location
)
(:init
(receptacleType {DESK} DeskType)
(receptacleType {DRAWER} DrawerType)
(objectType {PEN} PenType)
(canContain DeskType PenType)
(canContain DrawerType PenType)
(openable {DRAWER})
(pickupable {PEN})
(receptacleAtLocation {DESK} {AT_DESK})
(receptacleAtLocation {DRAWER} {AT_DRAWER})
(inReceptacle {PEN} {DESK})
(objectAtLocation {PEN} {AT_DESK})
(atLocation agent1 {START})
)
(:goal (and (exists (?r - receptacle) (exists (?o - object)
  (and (objectType ?o PenType) (receptacleType ?r DrawerType) (inReceptacle ?o ?r))))))
)
"""
TASK = "put a pen in drawer"
SOLUTION = [
    "go to desk 1",
    "take pen 1 from desk 1",
    "go to drawer 1",
    "open drawer 1",
    "move pen 1 to drawer 1",
]


def write_game(path: Path) -> Path:
    """Write the game file to `path` (needs the `alfworld` package for domain and grammar)."""
    from alfworld.info import ALFRED_PDDL_PATH, ALFRED_TWL2_PATH

    grammar = Path(ALFRED_TWL2_PATH).read_text(encoding="utf-8")
    game = {
        "pddl_domain": Path(ALFRED_PDDL_PATH).read_text(encoding="utf-8"),
        "grammar": grammar.replace("UNKNOWN GOAL", TASK),
        "pddl_problem": PROBLEM,
        "solvable": True,
        "walkthrough": SOLUTION,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(game), encoding="utf-8")
    return path
