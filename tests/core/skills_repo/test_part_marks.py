"""A part of a hunk (a split block or a line selection) judged by its own lines: on main,
in conflict, and its own `@@` header."""

from __future__ import annotations

from core.skills_repo import SkillsRepo
from core.skills_repo.line_select import part_header, part_rows
from tests.support.tui_app import IDENTITY, SKILL_V1, stage_split_branch


def _repo(tmp_path) -> SkillsRepo:
    repo = SkillsRepo.init(tmp_path / "skills", identity=IDENTITY)
    repo.add_skill("quiz", SKILL_V1)
    stage_split_branch(repo)
    return repo


def test_blocks_are_marked_by_their_own_lines(tmp_path):
    repo = _repo(tmp_path)
    repo.adopt("staged/demo-split", lines={1: {1, 2}})
    marks = repo.part_marks("staged/demo-split", [(2, frozenset({3}))])
    first, second = frozenset({1, 2}), frozenset({3, 4})
    assert marks[(1, first)].on_main and not marks[(1, second)].on_main
    assert not any(m.conflicts for m in marks.values())
    assert not marks[(2, frozenset({3}))].on_main
    assert not repo.diff("staged/demo-split").hunks[0].on_main  # the parent is not


def test_a_part_conflicts_only_where_its_own_lines_clash(tmp_path):
    repo = _repo(tmp_path)
    repo.stage(
        "quiz",
        "other",
        SKILL_V1.replace("- Use plain text.\n", "- Use plain text only.\n"),
        subject="other",
        trailers={"Run-Id": "other"},
    )
    repo.adopt("staged/other")
    marks = repo.part_marks("staged/demo-split")
    assert repo.diff("staged/demo-split").hunks[0].conflicts
    assert not marks[(1, frozenset({1, 2}))].conflicts
    assert marks[(1, frozenset({3, 4}))].conflicts


def test_a_part_has_its_own_header_and_rows(tmp_path):
    hunk = _repo(tmp_path).diff("staged/demo-split").hunks[1]
    # hunk 2: -Do not guess. / +Do not guess; say… / +Cite a source.
    assert part_header(hunk, {1, 2, 3}) == hunk.header.split(" @@")[0] + " @@"
    rows = part_rows(hunk, {3})
    kinds = [(hunk.lines[i][1:], kind) for i, kind in rows]
    assert ("- Do not guess.", " ") in kinds  # left in place: context
    assert all("say you do not know" not in text for text, _ in kinds)  # never reaches it
    old = sum(1 for _, k in rows if k in " -")
    new = sum(1 for _, k in rows if k in " +")
    assert part_header(hunk, {3}).startswith("@@ -") and f",{old} +" in part_header(hunk, {3})
    assert part_header(hunk, {3}).endswith(f",{new} @@")
