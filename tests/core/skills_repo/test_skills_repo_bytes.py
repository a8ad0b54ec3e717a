"""Exact bytes through stage → diff → adopt → rollback: CRLF, no final newline, unicode."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.skills_repo import SkillsRepo
from core.skills_repo.hunks import apply_hunks, net_hunks, split_lines
from tests.support.skills_git import plain_git

CRLF_BASE = "".join(f"rule {i}\r\n" for i in range(1, 13)) + "last rule, no newline"
CRLF_HEAD = (
    "rule 1, sharper\r\n"
    + "".join(f"rule {i}\r\n" for i in range(2, 13))
    + "last rule, no newline\r\nnew last line, still no newline"
)


def test_crlf_and_missing_final_newline_round_trip(tmp_path: Path):
    repo = SkillsRepo.init(tmp_path / "skills")
    target = tmp_path / "CLAUDE.md"
    repo.add_skill("crlf", CRLF_BASE, deploy_to=str(target))
    assert target.read_bytes() == CRLF_BASE.encode()
    repo.stage("crlf", "r", CRLF_HEAD, subject="s", trailers={"Step": "1"})
    diff = repo.diff("r")
    assert len(diff.hunks) == 2
    assert diff.hunks[1].lines[-5:] == [
        "-last rule, no newline",
        "\\ No newline at end of file",
        "+last rule, no newline",
        "+new last line, still no newline",
        "\\ No newline at end of file",
    ]
    repo.adopt("r", [2])  # only the tail: CRLF added to the old last line, new last line
    want = CRLF_BASE.replace("last rule, no newline", "") + (
        "last rule, no newline\r\nnew last line, still no newline"
    )
    assert (repo.path / "crlf/SKILL.md").read_bytes() == want.encode()
    assert target.read_bytes() == want.encode()
    repo.adopt("r", [1])
    assert target.read_bytes() == CRLF_HEAD.encode()
    assert repo.read_skill("crlf") == CRLF_HEAD
    repo.rollback("crlf")
    repo.rollback("crlf")
    assert (repo.path / "crlf/SKILL.md").read_bytes() == CRLF_BASE.encode()
    assert target.read_bytes() == CRLF_BASE.encode()
    assert plain_git(repo.path, "status", "--porcelain") == ""


def test_names_and_paths_with_spaces_and_unicode(tmp_path: Path):
    repo = SkillsRepo.init(tmp_path / "my skills ☃")
    name = "Rédacteur technique ✓"
    target = tmp_path / "déploiement ici" / "SKILL.md"
    repo.add_skill(name, "Écris bien.\n", path="dossier à moi/SKILL FILE.md", deploy_to=str(target))
    run = "nuit-été-1"
    repo.stage(name, run, "Écris bien.\nSois bref — toujours.\n", subject="ajout", trailers={})
    [branch] = repo.staged_branches()
    assert (branch.skill, branch.run_id) == (name, run)
    diff = repo.diff(f"staged/{run}")
    assert diff.hunks[0].file == "dossier à moi/SKILL FILE.md"
    assert "+Sois bref — toujours." in diff.hunks[0].lines
    repo.adopt(run)
    assert target.read_text("utf-8") == "Écris bien.\nSois bref — toujours.\n"
    assert [e.kind for e in repo.log(name)] == ["adopt", "add"]
    repo.rollback(name)
    assert target.read_text("utf-8") == "Écris bien.\n"
    assert plain_git(repo.path, "status", "--porcelain") == ""


_line = st.sampled_from(["a", "b", "c", "dd", "", "é", "x y"])
_ending = st.sampled_from(["\n", "\r\n"])
_text = st.builds(
    lambda lines, tail: "".join(lines) + tail,
    st.lists(st.builds(str.__add__, _line, _ending), max_size=25),
    st.sampled_from(["", "tail", "tail\r"]),
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(base=_text, head=_text, pick=st.sets(st.integers(1, 8)))
def test_applying_hunks_is_exact(tmp_path: Path, base: str, head: str, pick: set[int]):
    """All hunks rebuild the staged file byte for byte; any subset and then the rest does too."""
    repo = (
        SkillsRepo.init(tmp_path / "prop")
        if not (tmp_path / "prop").exists()
        else (SkillsRepo.open(tmp_path / "prop"))
    )
    b = repo.commit_tree(repo.tree_with(None, {"f.md": base.encode()}), [], "base\n")
    h = repo.commit_tree(repo.tree_with(b, {"f.md": head.encode()}), [b], "head\n")
    hunks = net_hunks(repo.git, b, h, "f.md")
    every = {x.index for x in hunks}
    assert apply_hunks(base.encode(), head.encode(), hunks, every) == head.encode()
    chosen = pick & every
    partial = apply_hunks(base.encode(), head.encode(), hunks, chosen)
    assert len(split_lines(partial)) == len(split_lines(base.encode())) + sum(
        x.added - x.removed for x in hunks if x.index in chosen
    )
    if not chosen:
        assert partial == base.encode()
