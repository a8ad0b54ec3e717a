"""Mining what a session says about each task (issue 21): its kind from the assistant's own
tool calls, the turns a follow-up depends on, the constraints and corrections (rubric),
what the person accepted (reference) and the verification commands it ran (checks) —
through the real harvest of Claude Code and Codex transcripts."""

import json

from sleep.harvest.run import HarvestOptions, harvest
from sleep.mine.heuristic import mine_sessions
from sleep.mine.tasks import Check, MinedTask, TaskArchive
from tests.sleep.transcripts import (
    claude_assistant,
    claude_user,
    codex_line,
    codex_meta,
    codex_prompt,
    uid,
    write_claude,
    write_codex,
)

CWD = "/home/alex/src/pipeline"


def claude_tool_use(name: str, tool_input: dict, session="s-1") -> dict:
    return {
        "type": "assistant",
        "uuid": uid(),
        "cwd": CWD,
        "sessionId": session,
        "message": {"id": "m", "role": "assistant", "model": "m",
                    "content": [{"type": "tool_use", "id": uid(), "name": name, "input": tool_input}]},
    }  # fmt: skip


def mined(tmp_path, claude=None, codex=None) -> dict[str, MinedTask]:
    homes = tmp_path / "claude", tmp_path / "codex"
    for home in homes:
        home.mkdir(exist_ok=True)
    if claude:
        write_claude(homes[0], claude)
    if codex:
        write_codex(homes[1], codex)
    result = harvest(
        HarvestOptions(
            state_dir=tmp_path / "state", claude_home=str(homes[0]), codex_home=str(homes[1])
        )
    )
    tasks = mine_sessions([s.to_json() for s in result.sessions])
    return {t.intent: t for t in tasks}


def user(text: str, **kw) -> dict:
    return claude_user(text, cwd=CWD, **kw)


def reply(text: str) -> dict:
    return claude_assistant(text, cwd=CWD)


SESSION = [
    user("add input validation to total() in billing.py"),
    claude_tool_use("Edit", {"file_path": "billing.py", "old_string": "a", "new_string": "b"}),
    claude_tool_use("Bash", {"command": "cd /repo && make test", "description": "tests"}),
    reply("total() now raises ValueError on negative amounts; make test passes."),
    user("no, don't raise: return 0 and log a warning instead of raising"),
    claude_tool_use("Bash", {"command": "python -m pytest -q tests/test_billing.py"}),
    reply("total() now logs a warning and returns 0 for negative amounts."),
    user("thanks"),
    user("write a changelog entry for these changes"),
    reply("Added a 'Fixed' entry to CHANGELOG.md."),
    user("what is in here?"),
    claude_tool_use("Bash", {"command": "ls"}),
    reply("billing.py, tests/, CHANGELOG.md"),
]


def test_the_assistants_tool_calls_make_a_task_agentic(tmp_path):
    tasks = mined(tmp_path, claude=SESSION)
    assert tasks["what is in here?"].kind == "agentic"  # its text alone reads as advice


def test_a_follow_up_carries_the_turns_it_refers_to(tmp_path):
    tasks = mined(tmp_path, claude=SESSION)
    changelog = tasks["write a changelog entry for these changes"]
    prompts = [t.prompt for t in changelog.context]
    assert prompts[0] == "add input validation to total() in billing.py"
    assert any("return 0 and log a warning" in p for p in prompts)
    assert any("logs a warning and returns 0" in t.answer for t in changelog.context)
    assert changelog.kind == "agentic"
    # a request standing on its own keeps none
    assert tasks["add input validation to total() in billing.py"].context == []


def test_the_reference_is_the_answer_the_person_accepted_not_the_corrected_one(tmp_path):
    task = mined(tmp_path, claude=SESSION)["add input validation to total() in billing.py"]
    assert task.reference == "total() now logs a warning and returns 0 for negative amounts."
    assert "correct an earlier answer" in task.rubric
    assert Check("not_contains", "raising") in task.checks


def test_verification_commands_the_session_ran_become_command_checks(tmp_path):
    tasks = mined(tmp_path, claude=SESSION)
    task = tasks["add input validation to total() in billing.py"]
    commands = [c.value for c in task.checks if c.kind == "command"]
    assert commands == ["make test", "python -m pytest -q tests/test_billing.py"]
    assert not task.train_only
    assert tasks["what is in here?"].checks == []  # `ls` is not a verification


def test_constraints_in_the_request_become_its_rubric(tmp_path):
    tasks = mined(
        tmp_path,
        claude=[
            user("Rename the function add_note to create_note.\nKeep the old name as an alias.")
        ],
    )
    task = tasks["Rename the function add_note to create_note.\nKeep the old name as an alias."]
    assert "Keep the old name as an alias." in task.rubric


def test_an_unanswered_last_request_has_nothing_to_judge_by_and_is_train_only(tmp_path):
    tasks = mined(tmp_path, claude=[user("refactor parse_rows() in loader.py"), reply("Done.")])
    task = tasks["refactor parse_rows() in loader.py"]
    assert task.reference == "" and task.rubric == "" and task.checks == []
    assert task.train_only


def test_codex_shell_calls_and_final_answers_are_evidence(tmp_path):
    call = {"type": "function_call", "name": "exec_command", "call_id": "c1",
            "arguments": json.dumps({"cmd": "cargo test --quiet", "workdir": CWD})}  # fmt: skip
    answer = {"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": "All 12 tests pass."}]}  # fmt: skip
    records = [
        codex_meta(cwd=CWD),
        *codex_prompt("run the test suite and summarise any failures"),
        codex_line("response_item", call),
        codex_line("response_item", answer),
        codex_line("event_msg", {"type": "agent_message", "message": "All 12 tests pass."}),
        *codex_prompt("great, now add a README section describing those stages"),
    ]
    tasks = mined(tmp_path, codex=records)
    suite = tasks["run the test suite and summarise any failures"]
    assert suite.kind == "agentic"
    assert Check("command", "cargo test --quiet") in suite.checks
    assert suite.reference == "All 12 tests pass."  # accepted: the next request moved on
    readme = tasks["great, now add a README section describing those stages"]
    assert [t.prompt for t in readme.context] == ["run the test suite and summarise any failures"]


def test_secrets_in_answers_and_commands_are_redacted(tmp_path):
    key = "sk-ant-api03-" + "Q" * 90
    session = [
        user("check that deploy.sh reads the key from the environment"),
        claude_tool_use("Bash", {"command": f"ANTHROPIC_API_KEY={key} make test"}),
        reply(f"It does; I tested with {key}."),
        user("ok"),
    ]
    task = mined(tmp_path, claude=session)[
        "check that deploy.sh reads the key from the environment"
    ]
    assert key not in json.dumps(task.to_dict())
    assert "[REDACTED:" in task.reference


def test_external_and_redacted_requests_are_kinds_of_their_own(tmp_path):
    tasks = mined(
        tmp_path,
        claude=[
            user("post the nightly run summary to #data-alerts"),
            user("decode this token and tell me when it expires: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
        ],
    )  # fmt: skip
    kinds = {t.intent.split()[0]: t.kind for t in tasks.values()}
    assert kinds == {"post": "external", "decode": "redacted"}


def test_an_archive_written_before_kinds_loads_with_defaults(tmp_path):
    path = tmp_path / "tasks.json"
    old = {"id": "t-1", "intent": "fix the flaky test", "project": "/p", "kind": "coding",
           "rubric": "", "checks": [{"kind": "contains", "value": "pytest"}],
           "source_sessions": ["claude:s"], "skill": None, "occurrences": 1,
           "first_seen": None, "last_seen": None, "branch": None}  # fmt: skip
    bare = {**old, "id": "t-2", "kind": "advice", "checks": []}
    path.write_text(json.dumps({"version": 1, "tasks": [old, bare]}))
    tasks = TaskArchive(path).load()
    assert tasks["t-1"].kind == "agentic" and tasks["t-1"].context == []
    assert tasks["t-1"].reference == "" and not tasks["t-1"].train_only
    assert tasks["t-2"].train_only  # nothing to judge it by
    again = TaskArchive(path).merge([])
    assert again["t-1"].to_dict() == tasks["t-1"].to_dict()


def test_a_task_seen_again_keeps_the_kind_that_replays_it_safely(tmp_path):
    archive = TaskArchive(tmp_path / "tasks.json")
    advice = MinedTask(id="t-1", intent="what is in here?", project="/p", kind="advice")
    archive.merge([advice])
    seen_with_tools = MinedTask(id="t-1", intent="what is in here?", project="/p", kind="agentic")
    assert archive.merge([seen_with_tools])["t-1"].kind == "agentic"
    posted = MinedTask(id="t-1", intent="what is in here?", project="/p", kind="external")
    archive.merge([posted])
    assert archive.merge([advice])["t-1"].kind == "external"  # never replayed again
