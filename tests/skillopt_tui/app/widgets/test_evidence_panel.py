"""The Review screen's evidence column shows how sure the gate was (`Val-Items`,
`Evidence: p=…`) beside the per-item deltas, read from a commit the real stager wrote."""

from __future__ import annotations

from core.run.staging import StagedCandidate
from core.skills_repo import SkillsRepo, SkillsRepoStager
from skillopt_tui.app.widgets.evidence_panel import evidence_text

SKILL = "# Quiz\n\n- Be brief.\n"


def test_val_items_and_evidence_sit_beside_the_item_deltas(tmp_path):
    repo = SkillsRepo.init(tmp_path / "skills", identity=("Test", "test@example.com"))
    repo.add_skill("quiz", SKILL)
    SkillsRepoStager(repo, "quiz", "run-1").stage(
        StagedCandidate(
            run_id="run-1", step=2, skill_text=SKILL + "- Say when you do not know.\n",
            val_before=0.4, val_after=0.9, items_improved=6, items_regressed=0,
            edits=[{"op": "append", "rationale": "it guessed"}], val_items=6,
        )
    )  # fmt: skip
    diff = repo.diff("staged/run-1")
    lines = [line.strip() for line in evidence_text(diff, None, {}).plain.splitlines()]
    at = lines.index("Items-Improved: 6")
    assert lines[at : at + 4] == [
        "Items-Improved: 6",
        "Items-Regressed: 0",
        "Val-Items: 6",
        "Evidence: p=0.03125",
    ]
