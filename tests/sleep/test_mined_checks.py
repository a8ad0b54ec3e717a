"""Mined checks a replay applies without a judge (issue 37): on the diff's added lines, on
the commands the agent ran, on the reply's form; a check the replay's evidence cannot
tell (a diff check on a chat reply) counts for nothing. Each fails on the code before."""

from __future__ import annotations

import json
from pathlib import Path

from core.models.types import AgentOutcome, Completion, Usage
from sleep.mine.tasks import Check, MinedTask, ReplayEvidence
from sleep.night.replay_env import AgentReplay, ReplayEnvironment

DIFF_PRINT = """\
diff --git a/cli.py b/cli.py
--- a/cli.py
+++ b/cli.py
@@ -1,2 +1,4 @@
-import sys
+import sys
+import requests
+    print(f"verbose: {args}")
"""
DIFF_LOGGING = """\
--- a/cli.py
+++ b/cli.py
@@ -1,2 +1,4 @@
+import logging
+from cli_helpers import parse
+    logging.info("verbose: %s", args)
"""


def seen(
    diff: str | None = None, commands: list[str] | None = None, reply: str = ""
) -> ReplayEvidence:
    return ReplayEvidence(reply, diff, commands)


def test_a_literal_ending_in_punctuation_matches_a_call_with_arguments():
    """issue 37: `not_contains "print("` missed `print(f"…")` (a whole-word match)."""
    assert Check("not_contains", "print(").evaluate(seen(reply='I added print(f"x").')) is False
    assert Check("not_contains", "npm").evaluate(seen(reply="use pnpm install"))  # whole-word


def test_diff_checks_read_only_the_lines_the_replay_added():
    assert Check("diff_not_adds", r"\bprint\(").evaluate(seen(DIFF_PRINT)) is False
    assert Check("diff_not_adds", r"\bprint\(").evaluate(seen(DIFF_LOGGING)) is True
    removed_only = "--- a/x.py\n+++ b/x.py\n-    print('old')\n"
    assert Check("diff_not_adds", r"\bprint\(").evaluate(seen(removed_only)) is True
    assert Check("diff_adds", r"\blogging\b").evaluate(seen(DIFF_LOGGING)) is True
    assert Check("diff_adds", r"\blogging\b").evaluate(seen("")) is False  # no change made
    assert Check("diff_adds", r"\blogging\b").evaluate(seen(None)) is None  # a chat reply


def test_no_new_import_allows_the_standard_library_and_the_projects_own_modules():
    check = Check("no_new_import", "")
    assert check.evaluate(seen(DIFF_PRINT)) is False  # requests
    own = ReplayEvidence("", DIFF_LOGGING, None, frozenset({"cli_helpers"}))
    assert check.evaluate(own) is True
    manifest = "--- a/requirements.txt\n+++ b/requirements.txt\n+httpx>=0.27\n"
    assert check.evaluate(seen(manifest)) is False
    package = '--- a/package.json\n+++ b/package.json\n+    "left-pad": "^1.3.0",\n'
    assert check.evaluate(seen(package)) is False
    node = "--- a/a.js\n+++ b/a.js\n+import fs from 'node:fs'\n+const x = require('./x')\n"
    assert check.evaluate(seen(node)) is True


def test_ran_reads_the_commands_the_agent_ran():
    check = Check("ran", r"\bmake\s+test")
    assert check.evaluate(seen("", ["ls", "cd /w && make  test"])) is True
    assert check.evaluate(seen("", ["ls"])) is False
    assert check.evaluate(seen("")) is None  # commands not seen (a handoff)


def test_answer_form_checks():
    yes_no = Check("answer_starts_with", "yes|no")
    assert yes_no.evaluate(seen(reply="**No** — they are kept.")) is True
    assert yes_no.evaluate(seen(reply="Nulls are dropped, so yes.")) is False
    one_line = Check("answer_first_line_max", "12 words")
    assert one_line.evaluate(seen(reply="\nThey are dropped by clean_rows.\n\nDetails…")) is True
    assert one_line.evaluate(seen(reply="Let me walk you through " + "the loader " * 10)) is False
    assert Check("answer_first_line_max", "30 chars").evaluate(seen(reply="x" * 31)) is False


def runner(diff: str, commands: list[str]):
    """A TEST DOUBLE of a coding agent: the diff it made and the Bash calls it ran."""
    events = [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": f"c{n}", "name": "Bash", "input": {"command": c}}]}}
        for n, c in enumerate(commands)
    ]  # fmt: skip

    async def run(task, _skill):
        return AgentOutcome("Added --verbose.", events, diff, 0, Usage(), 0.0, "double", "", None)

    return run


async def judge(_messages, **_settings) -> Completion:
    return Completion(json.dumps({"score": 1, "reason": "ok"}), Usage(), "stop", 0.0, "judge")


async def test_an_agent_replay_is_scored_on_its_diff_and_commands(tmp_path: Path):
    checks = [Check("diff_not_adds", r"\bprint\("), Check("ran", r"\bmake\s+test"),
              Check("no_new_import", "")]  # fmt: skip
    task = MinedTask(id="t1", intent="add a --verbose flag", project=str(tmp_path),
                     kind="agentic", rubric="use logging", checks=checks)  # fmt: skip
    (tmp_path / "cli_helpers.py").write_text("def parse(): ...\n")  # the project's own module
    env = ReplayEnvironment({"train": [task]}, judge, agent=AgentReplay(tmp_path, None, "project"))
    [item] = env.load_split("train")
    bad = await env.rollout(item, "# skill", runner(DIFF_PRINT, ["ls"]))
    good = await env.rollout(item, "# skill", runner(DIFF_LOGGING, ["make test"]))
    assert bad.soft == 0.75 and "mined checks 0/3 passed" in bad.explanation
    assert "its changes add no /\\bprint\\(/" in bad.explanation
    assert "mined checks 3/3 passed" in good.explanation, good.explanation
    assert good.soft == 1.0


async def test_a_chat_replay_is_not_failed_by_a_check_it_cannot_tell():
    task = MinedTask(id="t1", intent="how should I log?", project=None, rubric="logging",
                     checks=[Check("diff_adds", "logging"), Check("contains", "logging")])  # fmt: skip
    env = ReplayEnvironment({"train": [task]}, judge)
    [item] = env.load_split("train")

    async def target(_messages, **_settings) -> Completion:
        return Completion("Use the logging module.", Usage(), "stop", 0.0, "target")

    result = await env.rollout(item, "# skill", target)
    assert result.soft == 1.0 and "mined checks 1/1 passed" in result.explanation


def test_the_commands_a_replay_ran_are_read_from_each_kind_of_run():
    from sleep.night.replay_evidence import commands_in_calls, commands_in_events

    claude = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Bash", "input": {"command": "make test"}},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "a.py"}}]}}  # fmt: skip
    codex = {"type": "item.completed",
             "item": {"type": "command_execution", "command": "bash -lc 'pytest -q'"}}  # fmt: skip
    assert commands_in_events([claude, codex]) == ["make test", "bash -lc 'pytest -q'"]
    loop = [{"name": "shell", "arguments": {"command": "make test"}},
            {"name": "read_file", "arguments": {"path": "a.py"}}]  # fmt: skip
    assert commands_in_calls(loop) == ["make test"]
