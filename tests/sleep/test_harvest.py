"""A whole harvest over real folders: sources, scope, automation, cursors, skipped files."""

import json
import os
import shutil

import pytest
import zstandard

from core.file_lock import FileLock
from sleep.harvest.run import LOCK_FILE, HarvestBusy, HarvestOptions, harvest
from sleep.harvest.sources import discover
from sleep.harvest.timestamps import parse_since
from tests.sleep.transcripts import (
    REAL,
    claude_assistant,
    claude_user,
    codex_meta,
    codex_prompt,
    examples_dir,
    jsonl,
    touch_in_order,
    write_claude,
    write_codex,
)


@pytest.fixture
def homes(tmp_path):
    claude, codex = tmp_path / "claude", tmp_path / "codex"
    claude.mkdir()
    codex.mkdir()
    return claude, codex, tmp_path / "state"


def run(homes, **kw):
    claude, codex, state = homes
    kw.setdefault("project", None)
    return harvest(
        HarvestOptions(state_dir=state, claude_home=str(claude), codex_home=str(codex), **kw)
    )


def texts(result):
    return [t.text for s in result.sessions for t in s.tasks]


def test_examples_as_laid_out_on_disk(homes):
    claude, codex, _ = homes
    ex = examples_dir()
    proj = claude / "projects" / "-Users-sam-projects-weather-cli"
    proj.mkdir(parents=True)
    shutil.copy(
        ex / "claude-tools-sidechain.jsonl", proj / "e3028531-19b5-4674-9cd8-90754aa5c16a.jsonl"
    )
    shutil.copytree(ex / "claude-tools-sidechain", proj / "e3028531-19b5-4674-9cd8-90754aa5c16a")
    (proj / "agent-1a2b3c4d.jsonl").write_bytes(jsonl([claude_user("Warmup", isSidechain=True)]))
    day = codex / "sessions" / "2026" / "06" / "10"
    day.mkdir(parents=True)
    shutil.copy(
        ex / "codex-tools.jsonl",
        day / "rollout-2026-06-10T18-20-31-019eb255-d964-7f90-bba7-b7c366b902db.jsonl",
    )
    result = run(homes)
    by_id = {s.session_id: s for s in result.sessions}
    assert len(by_id["e3028531-19b5-4674-9cd8-90754aa5c16a"].tasks) == 2
    assert [t.aborted for t in by_id["019eb255-d964-7f90-bba7-b7c366b902db"].tasks] == [False, True]
    assert by_id["019eb255-d964-7f90-bba7-b7c366b902db"].branch == "feat/units-flag"
    roots = {r.tool: r for r in result.roots}
    assert roots["claude"].subagent_files == 2
    assert result.skipped == []


def test_second_harvest_reads_nothing_new(homes):
    claude, codex, _ = homes
    write_claude(claude, [claude_user("one"), claude_assistant()])
    write_codex(codex, [codex_meta(), *codex_prompt("two")])
    assert sorted(texts(run(homes))) == ["one", "two"]
    again = run(homes)
    assert again.sessions == [] and again.files_read == 0 and again.files_unchanged == 2


def test_a_file_appended_between_runs_gives_only_the_new_tasks(homes):
    claude, codex, _ = homes
    path = write_claude(claude, [claude_user("one"), claude_assistant()])
    rollout = write_codex(codex, [codex_meta(), *codex_prompt("a")])
    run(homes)
    with open(path, "ab") as fh:
        fh.write(jsonl([claude_user("two"), claude_assistant()]))
    with open(rollout, "ab") as fh:
        fh.write(jsonl(codex_prompt("b")))
    result = run(homes)
    assert sorted(texts(result)) == ["b", "two"]
    codex_session = next(s for s in result.sessions if s.source == "codex")
    assert codex_session.cwd == "/home/alex/src/app"  # identity kept from the first read


def test_a_pending_last_line_is_read_once_it_is_complete(homes):
    claude, _, _ = homes
    line = json.dumps(claude_user("finished later")).encode()
    path = write_claude(claude, [claude_user("one"), claude_assistant()])
    with open(path, "ab") as fh:
        fh.write(line[:40])
    assert texts(run(homes)) == ["one"]
    with open(path, "ab") as fh:
        fh.write(line[40:] + b"\n")
    assert texts(run(homes)) == ["finished later"]


def test_a_truncated_or_rewritten_file_is_read_again_from_the_start(homes):
    claude, codex, _ = homes
    rollout = write_codex(codex, [codex_meta(), *codex_prompt("a"), *codex_prompt("b")])
    run(homes)
    rollout.write_bytes(jsonl([codex_meta(), *codex_prompt("c")]))  # shorter: truncated
    assert texts(run(homes)) == ["c"]
    data = jsonl([codex_meta(), *codex_prompt("X"), *codex_prompt("d")])
    rollout.write_bytes(data)  # longer, but the start changed: rewritten
    assert texts(run(homes)) == ["X", "d"]


def test_a_rotated_claude_file_replaced_by_another_session_is_read_whole(homes):
    claude, _, _ = homes
    path = write_claude(claude, [claude_user("old", uuid="u-old"), claude_assistant()])
    run(homes)
    path.rename(path.with_suffix(".jsonl.1"))  # rotated away; a new file takes the name
    write_claude(
        claude, [claude_user("new one", uuid="u-new"), claude_assistant(), claude_user("new two")]
    )
    assert texts(run(homes)) == ["new one", "new two"]


def test_a_rollout_compressed_and_archived_keeps_its_cursor(homes):
    _, codex, _ = homes
    rollout = write_codex(codex, [codex_meta(), *codex_prompt("a")])
    assert texts(run(homes)) == ["a"]
    archived = codex / "archived_sessions" / (rollout.name + ".zst")
    archived.parent.mkdir()
    data = rollout.read_bytes() + jsonl(codex_prompt("b"))
    archived.write_bytes(zstandard.ZstdCompressor().compress(data))
    rollout.unlink()
    assert texts(run(homes)) == ["b"]
    assert texts(run(homes)) == []


def test_plain_wins_over_compressed_and_sessions_over_archive(homes):
    _, codex, _ = homes
    rollout = write_codex(codex, [codex_meta(), *codex_prompt("plain")])
    rollout.with_name(rollout.name + ".zst").write_bytes(
        zstandard.ZstdCompressor().compress(jsonl([codex_meta(), *codex_prompt("zst")]))
    )
    (codex / "archived_sessions").mkdir()
    (codex / "archived_sessions" / rollout.name).write_bytes(
        jsonl([codex_meta(), *codex_prompt("arch")])
    )
    assert texts(run(homes)) == ["plain"]


def test_a_compressed_only_rollout_is_read(homes):
    _, codex, _ = homes
    path = (
        codex
        / "sessions"
        / "rollout-2026-01-01T00-00-00-019e0000-0000-7000-8000-00000000000a.jsonl.zst"
    )
    path.parent.mkdir(parents=True)
    path.write_bytes(zstandard.ZstdCompressor().compress(jsonl([codex_meta(), *codex_prompt("z")])))
    assert texts(run(homes)) == ["z"]


def test_scope_is_the_recorded_cwd_not_the_folder_name(homes, tmp_path):
    claude, codex, _ = homes
    project = tmp_path / "Open Source" / "app"
    project.mkdir(parents=True)
    other = tmp_path / "Open-Source" / "app"
    # Both encode to the same folder name; only the recorded cwd tells them apart.
    write_claude(claude, [claude_user("mine", cwd=str(project / "sub"))], session="s-a",
                 folder="-tmp-Open-Source-app")  # fmt: skip
    write_claude(claude, [claude_user("theirs", cwd=str(other))], session="s-b",
                 folder="-tmp-Open-Source-app")  # fmt: skip
    write_codex(codex, [codex_meta(cwd=str(project)), *codex_prompt("codex mine")])
    result = run(homes, project=project)
    assert sorted(texts(result)) == ["codex mine", "mine"]
    assert result.left_out["other project"] == 1
    # The other project's session was not marked read: harvesting it later gets it whole.
    assert texts(run(homes, project=other)) == ["theirs"]


def test_automation_is_kept_apart_unless_asked_for(homes):
    claude, codex, _ = homes
    write_claude(claude, [claude_user("typed")], session="s-a")
    write_claude(
        claude, [claude_user("scripted", entrypoint="sdk-cli", promptSource="sdk")], session="s-b"
    )
    write_codex(codex, [codex_meta(originator="codex_exec", source="exec"), *codex_prompt("exec")])
    first = run(homes)
    assert texts(first) == ["typed"]
    assert first.left_out["automation"] == 2
    later = run(homes, include_automation=True)
    assert sorted(texts(later)) == ["exec", "scripted"]
    assert all(s.automation for s in later.sessions)


def test_since_filters_by_in_file_timestamps(homes):
    claude, _, _ = homes
    write_claude(claude, [
        claude_user("old", timestamp="2026-01-01T10:00:00.000Z"), claude_assistant(),
        claude_user("new", timestamp="2026-03-02T10:00:00.000Z"),
    ])  # fmt: skip
    assert texts(run(homes, since=parse_since("2026-03-01T00:00:00Z"))) == ["new"]


def test_unreadable_files_and_bad_lines_are_reported_and_the_rest_is_read(homes):
    claude, codex, _ = homes
    bad = write_claude(claude, [claude_user("fine")], session="s-a")
    with open(bad, "ab") as fh:
        fh.write(b"{not json\n")
    locked = write_claude(claude, [claude_user("hidden")], session="s-b")
    broken = (
        codex
        / "sessions"
        / "rollout-2026-01-01T00-00-00-019e0000-0000-7000-8000-00000000000b.jsonl.zst"
    )
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not zstd at all")
    os.chmod(locked, 0)
    try:
        result = run(homes)
    finally:
        os.chmod(locked, 0o644)
    reasons = {os.path.basename(s.file): s.reason for s in result.skipped}
    assert "not a JSON object" in reasons["s-a.jsonl"]
    assert "fine" in texts(result)
    assert "ZstdError" in reasons[broken.name] or "zstd" in reasons[broken.name].lower()
    if os.geteuid() != 0:  # root reads any file
        assert "cannot read" in reasons["s-b.jsonl"]


def test_a_second_harvest_on_the_same_state_is_refused_while_one_runs(homes):
    _, _, state = homes
    state.mkdir()
    holder = FileLock(state / LOCK_FILE)
    assert holder.acquire()
    try:
        with pytest.raises(HarvestBusy, match="another harvest"):
            run(homes)
    finally:
        holder.release()


def test_a_preview_moves_no_cursor(homes):
    claude, _, state = homes
    write_claude(claude, [claude_user("one")])
    assert texts(run(homes, commit=False)) == ["one"]
    assert not (state / "harvest-state.json").exists()
    assert texts(run(homes)) == ["one"]


def test_task_texts_are_redacted_and_counted(homes):
    claude, _, state = homes
    key = "sk-" + "proj-" + "Zq8" * 12
    write_claude(claude, [claude_user(f"my key is {key} please rotate it")])
    result = run(homes)
    assert texts(result) == ["my key is [REDACTED:openai_key] please rotate it"]
    assert dict(result.redactions) == {"openai_key": 1}
    assert key not in (state / "harvest-state.json").read_text()
    assert key not in result.shown[0].context


def test_claude_roots_from_a_comma_list_and_xdg(tmp_path):
    a, b, xdg = tmp_path / "a", tmp_path / "b", tmp_path / "xdg"
    for root in (a, b, xdg / "claude"):
        (root / "projects" / "p").mkdir(parents=True)
        (root / "projects" / "p" / "s.jsonl").write_bytes(jsonl([claude_user("x")]))
    env = {
        "CLAUDE_CONFIG_DIR": f"{a}, {b}",
        "XDG_CONFIG_HOME": str(xdg),
        "CODEX_HOME": str(tmp_path / "c"),
    }
    roots = [r for r in discover(environ=env, home=tmp_path) if r.tool == "claude"]
    assert [r.path for r in roots] == [a, b, xdg / "claude"]
    assert all(len(r.sessions) == 1 for r in roots)


# -- transcripts written by the real CLIs (tests/sleep/fixtures/make_real_transcripts.py) --

REAL_CLAUDE_INTERACTIVE = [
    ("Explain what notes.py does in one paragraph.", False),
    ("Rename the function add_note to create_note.\nKeep the old name as an alias.", False),
    ("List the files in this project.", False),
    ("Slowly rewrite the whole module in Rust.", True),  # Escape while the model "thought"
    ("One more thing: add a docstring to create_note.", False),  # typed after --resume
]


@pytest.fixture
def real_homes(tmp_path):
    claude = shutil.copytree(REAL / "claude", tmp_path / "claude")
    codex = shutil.copytree(REAL / "codex", tmp_path / "codex")
    interactive = (
        claude
        / "projects"
        / "-home-dev-src-notes-app"
        / "91bbcae6-10d8-48d0-958e-3ba90ef9ead4.jsonl"
    )
    printed = (
        claude
        / "projects"
        / "-home-dev-src-notes-app"
        / "e89635d4-458c-4faf-b821-b62d3b871b24.jsonl"
    )
    touch_in_order([interactive, printed, *sorted(codex.rglob("*.jsonl"))])
    return claude, codex, tmp_path / "state"


def test_real_cli_transcripts_interactive_only_by_default(real_homes):
    result = run(real_homes)
    assert len(result.sessions) == 1
    session = result.sessions[0]
    assert (session.source, session.cwd, session.automation) == (
        "claude",
        "/home/dev/src/notes-app",
        False,
    )
    assert session.session_id == "91bbcae6-10d8-48d0-958e-3ba90ef9ead4"
    assert [(t.text, t.aborted) for t in session.tasks] == REAL_CLAUDE_INTERACTIVE
    assert result.left_out["automation"] == 2
    assert result.skipped == []


def test_real_cli_transcripts_with_automation(real_homes):
    result = run(real_homes, include_automation=True)
    got = [(s.source, s.automation, [t.text for t in s.tasks]) for s in result.sessions]
    assert got == [
        ("claude", False, [t for t, _ in REAL_CLAUDE_INTERACTIVE]),
        ("claude", True, ["List the files here and summarise them."]),
        ("codex", True, ["Count the lines of notes.py.", "Now show me the first line."]),
    ]
    assert run(real_homes, include_automation=True).sessions == []


def test_cursors_of_deleted_files_are_forgotten_but_other_roots_are_kept(homes, tmp_path):
    claude, codex, state = homes
    gone = write_claude(claude, [claude_user("old")], session="s-gone")
    other = tmp_path / "other-claude"
    write_claude(other, [claude_user("elsewhere")], session="s-other")
    harvest(HarvestOptions(state_dir=state, claude_home=str(other), codex_home=str(codex)))
    run(homes)
    gone.unlink()
    run(homes)
    keys = json.loads((state / "harvest-state.json").read_text())["cursors"]
    assert str(gone) not in keys
    assert any(k.startswith(str(other)) for k in keys)


def test_sessions_our_agent_backends_started_are_automation(homes, tmp_path):
    """A session id recorded by core.models.agents.process (a replay or an agent target run
    by this tool) is automation even when its records look typed."""
    from core.models.agents.process import SESSIONS_FILE

    claude, _, _ = homes
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / SESSIONS_FILE).write_text(
        json.dumps({"session_id": "s-ours", "agent": "claude_code"}) + "\n"
    )
    write_claude(claude, [claude_user("typed by a person", session="s-person")], session="s-person")
    write_claude(claude, [claude_user("typed by our replay", session="s-ours")], session="s-ours")
    result = run(homes, environ={"SKILLOPT_STATE_DIR": str(ours), "HOME": str(tmp_path)})
    assert texts(result) == ["typed by a person"]
    assert result.left_out["automation"] == 1
    both = run(
        homes,
        environ={"SKILLOPT_STATE_DIR": str(ours), "HOME": str(tmp_path)},
        include_automation=True,
    )
    assert {s.session_id: s.automation for s in both.sessions} == {"s-ours": True}
