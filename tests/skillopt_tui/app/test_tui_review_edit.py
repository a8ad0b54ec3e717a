"""Review's `e` (the hunk under the cursor) and `E` (the whole candidate) in $EDITOR: the
edit is staged as a new commit on the same branch, marked `Edited: by hand`, and Review
shows the new diff; an editor that exits non-zero or changes nothing stages nothing, and
the screen says so (issue 40). Real git repo; the editor is a scripted test double."""

from __future__ import annotations

from skillopt_tui.app.app import SkillOptApp
from tests.support.scripted_editor import scripted_editor, seen
from tests.support.tui_app import SKILL_SPLIT, open_review, split_repo, wait_until

BRANCH = "refs/heads/staged/demo-split"


def _said(app) -> str:
    return " | ".join(f"{n.title}: {n.message}" for n in app._notifications)


async def _edit(pilot, review, key: str) -> None:
    loads = review.loaded
    await pilot.press(key)
    assert await wait_until(
        pilot, lambda: review.loaded > loads and review.state is not None, limit=300
    ), _said(pilot.app)


async def test_e_stages_the_edited_hunk_on_the_same_branch(runs_dir, tmp_path, monkeypatch):
    repo = split_repo(tmp_path / "skills")
    before = repo.git.rev(BRANCH)
    ed = tmp_path / "ed"
    monkeypatch.setenv(
        "EDITOR", scripted_editor(ed, replace=[("Cite a source.", "Cite one source.")])
    )
    monkeypatch.delenv("VISUAL", raising=False)
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        await pilot.press("j")  # hunk #2
        await _edit(pilot, review, "e")
        assert "Cite a source." in seen(ed) and "Answer exactly" not in seen(ed)  # #2 alone
        head = repo.git.rev(BRANCH)
        assert repo.git.line("rev-parse", f"{head}^") == before
        assert review.diff.head == head  # Review shows the edited branch
        assert review.diff.evidence[-1].trailers["Edited"] == "by hand"
        text = repo.git.blob(head, "quiz/SKILL.md").decode()
        assert text == SKILL_SPLIT.replace("Cite a source.", "Cite one source.")
        assert "hunk 2 of staged/demo-split" in _said(app)


async def test_capital_e_edits_the_whole_candidate(runs_dir, tmp_path, monkeypatch):
    repo = split_repo(tmp_path / "skills")
    ed = tmp_path / "ed"
    monkeypatch.setenv("EDITOR", scripted_editor(ed, replace=[("Be polite.", "Be kind.")]))
    monkeypatch.delenv("VISUAL", raising=False)
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        await _edit(pilot, review, "E")
        assert seen(ed) == SKILL_SPLIT
        text = repo.git.blob(repo.git.rev(BRANCH), "quiz/SKILL.md").decode()
        assert text == SKILL_SPLIT.replace("Be polite.", "Be kind.")


async def test_an_editor_failing_or_changing_nothing_stages_nothing(
    runs_dir, tmp_path, monkeypatch
):
    repo = split_repo(tmp_path / "skills")
    before = repo.git.rev(BRANCH)
    monkeypatch.delenv("VISUAL", raising=False)
    app = SkillOptApp(runs_dir, tmp_path / "skills", refresh_runs=False, poll_interval=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        review = await open_review(pilot)
        failing = scripted_editor(tmp_path / "bad", replace=[("Paris", "Lyon")], exit_status=1)
        monkeypatch.setenv("EDITOR", failing)
        await pilot.press("e")
        assert await wait_until(pilot, lambda: "exited with status 1" in _said(app)), _said(app)
        assert "Nothing staged" in _said(app)
        assert repo.git.rev(BRANCH) == before
        monkeypatch.setenv("EDITOR", scripted_editor(tmp_path / "same"))
        await pilot.press("e")
        assert await wait_until(pilot, lambda: "left unchanged" in _said(app)), _said(app)
        assert repo.git.rev(BRANCH) == before
        assert not review.busy  # the next write is not blocked
