"""officeqa and spreadsheetbench with a coding agent as the target, without a CLI: the
registry picks the agent kind from the target backend, the rollout hands the agent exactly
the item's files and a confined task, and the unchanged scorers score what the agent left.

The agent here is `ScriptedAgent`, a TEST DOUBLE for the model client's `run_agent`: it
copies `task.files` into a fresh workspace the way the client does, runs the test's
`work(workspace)` as the agent's doing, then `task.check(workspace)`. The real CLIs run
the same items in tests/envs/benchmarks/test_exec_targets_real.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.config import EnvConfig, load_config
from core.environment.contract import EnvError, needs_agent
from core.models.agents.workspace import fresh_workspace
from core.models.types import AgentOutcome, RetriesExhausted, Usage
from envs import get_environment
from envs.listing import list_environments
from envs.officeqa.materialize import materialize as materialize_officeqa
from envs.spreadsheetbench.agent import workbook_names
from envs.spreadsheetbench.materialize import materialize as materialize_sheets
from tests.envs.benchmarks.fixtures import (
    SOLUTION,
    officeqa_source,
    spreadsheet_release,
    write_manifest,
)

openpyxl = pytest.importorskip("openpyxl")


class ScriptedAgent:
    """TEST DOUBLE for `ModelClient.run_agent` (see the module docstring)."""

    def __init__(self, work, text: str = "done"):
        self.work = work
        self.text = text
        self.tasks = []
        self.seen_files: list[list[str]] = []

    async def __call__(self, task, skill_text: str) -> AgentOutcome:
        self.tasks.append((task, skill_text))
        with fresh_workspace(Path(task.files), keep=False) as workspace:
            self.seen_files.append(sorted(p.name for p in workspace.iterdir()))
            text = self.work(workspace) or self.text
            checked = task.check(workspace)
        return AgentOutcome(
            text=text,
            events=[{"type": "item.completed", "item": {"type": "agent_message", "text": text}}],
            diff="",
            exit_status=0,
            usage=Usage(input_tokens=7, output_tokens=3),
            latency_s=0.5,
            model="double",
            session_id="s1",
            check=checked,
        )


def officeqa_env(tmp_path, backend):
    manifest = write_manifest(tmp_path / "manifest")
    materialize_officeqa(officeqa_source(tmp_path / "src"), tmp_path / "out", manifest)
    config = EnvConfig(name="officeqa", manifest_dir=str(manifest), data_dir=str(tmp_path / "out"))
    return get_environment(config, target_backend=backend)


def sheets_env(tmp_path, backend, cases=1):
    manifest = write_manifest(tmp_path / "manifest")
    source = spreadsheet_release(tmp_path / "release", cases=cases)
    materialize_sheets(source, tmp_path / "out", manifest)
    config = EnvConfig(
        name="spreadsheetbench", manifest_dir=str(manifest), data_dir=str(tmp_path / "out")
    )
    return get_environment(config, target_backend=backend)


# ------------------------------------------------------------------- registry and listing
@pytest.mark.parametrize("name", ["officeqa", "spreadsheetbench"])
def test_the_target_backend_picks_the_kind_and_the_version_names_it(name):
    chat = get_environment(EnvConfig(name=name), target_backend="openai")
    assert not needs_agent(chat) and get_environment(EnvConfig(name=name)).version == chat.version
    for backend in ("claude_code", "codex"):
        agent = get_environment(EnvConfig(name=name), target_backend=backend)
        assert needs_agent(agent)
        # Chat and agent rollouts of the same skill never share a rollout-cache entry.
        assert agent.version == f"{chat.version}+agent"


def test_other_environments_keep_their_kind_whatever_the_backend():
    for backend in ("claude_code", "codex", "openai", None):
        assert not needs_agent(get_environment(EnvConfig(name="searchqa"), target_backend=backend))
        assert needs_agent(get_environment(EnvConfig(name="repo_tasks"), target_backend=backend))


def test_skillopt_envs_lists_the_exec_target():
    rows = {r.name: r for r in list_environments()}
    for name in ("officeqa", "spreadsheetbench"):
        assert rows[name].targets == ["chat", "agent"]
        assert any("exec target" in need for need in rows[name].needs)
        assert "coding agent" in rows[name].interaction
    assert rows["spreadsheetbench"].to_dict()["targets"] == ["chat", "agent"]
    assert rows["searchqa"].targets == ["chat"] and rows["repo_tasks"].targets == ["agent"]


def test_the_configs_select_the_agent_target():
    root = Path(__file__).resolve().parents[3]
    for name in ("officeqa", "spreadsheetbench"):
        config = load_config(root / "configs" / name / "agent.yaml")
        assert config.models.target.backend == "claude_code" and config.env.name == name
        env = get_environment(config.env, target_backend=config.models.target.backend)
        assert env.target_kind == "agent"


# --------------------------------------------------------------------------------- officeqa
def find_total(workspace: Path) -> str:
    """What an agent does: read the bulletin, find the line, answer with its figure."""
    (name,) = [p for p in workspace.iterdir() if p.suffix == ".txt"]
    line = next(x for x in name.read_text().splitlines() if x.startswith("Total public debt"))
    return f"The table says {line!r}.\n<answer>{line.split(': ')[1]}</answer>"


async def test_officeqa_hands_over_only_the_items_files_and_scores_the_final_answer(tmp_path):
    env = officeqa_env(tmp_path, "claude_code")
    item = env.load_split("val")[0]
    agent = ScriptedAgent(find_total)
    result = await env.rollout(item, "# Skill\n", agent)
    task, skill = agent.tasks[0]
    # Only the cited bulletin: not the other item's document, not the items with answers.
    assert agent.seen_files == [["treasury_bulletin_1944_01.txt"]]
    assert task.workspace_only and not task.shell and task.skill_name == "officeqa"
    assert item.question in task.prompt and "<answer>" in task.prompt
    assert item.answer not in task.prompt and skill == "# Skill\n"
    assert not Path(task.files).exists()  # the staging folder is gone after the run
    assert (result.hard, result.prediction) == (1.0, "170,659 million dollars")
    assert result.trajectory[0] == {"role": "user", "content": task.prompt}
    assert result.trajectory[-1]["role"] == "exit" and result.error is None
    assert (result.input_tokens, result.output_tokens, result.latency_s) == (7, 3, 0.5)


async def test_officeqa_a_wrong_or_missing_answer_scores_zero(tmp_path):
    env = officeqa_env(tmp_path, "codex")
    item = env.load_split("val")[0]
    wrong = await env.rollout(item, "", ScriptedAgent(lambda ws: "<answer>170,000</answer>"))
    silent = await env.rollout(item, "", ScriptedAgent(lambda ws: None, text=""))
    assert wrong.hard == 0.0 and "170,659" in wrong.explanation
    assert (silent.hard, silent.prediction) == (0.0, "")


async def test_officeqa_an_agent_that_kept_failing_is_a_model_error(tmp_path):
    env = officeqa_env(tmp_path, "claude_code")

    async def failing(task, skill_text):
        raise RetriesExhausted("gave up after 3 attempts: HTTP 529")

    result = await env.rollout(env.load_split("val")[0], "", failing)
    assert result.error and "HTTP 529" in result.error and result.hard == 0.0


async def test_officeqa_a_missing_source_file_is_a_data_error(tmp_path):
    env = officeqa_env(tmp_path, "claude_code")
    (tmp_path / "out" / "docs" / "treasury_bulletin_1944_01.txt").unlink()
    with pytest.raises(EnvError, match="materialise the data again"):
        await env.rollout(env.load_split("val")[0], "", ScriptedAgent(find_total))


# ------------------------------------------------------------------------- spreadsheetbench
def run_solution(program: str):
    """What an agent does: write the program into the workspace and run it there."""

    def work(workspace: Path) -> None:
        (workspace / "solve.py").write_text(program)
        subprocess.run([sys.executable, "solve.py"], cwd=workspace, check=True)

    return work


PROGRAM = SOLUTION.removeprefix("```python\n").removesuffix("```")


async def test_spreadsheetbench_scores_the_workbook_the_agent_saved(tmp_path):
    env = sheets_env(tmp_path, "codex")
    item = env.load_split("val")[0]
    agent = ScriptedAgent(run_solution(PROGRAM))
    result = await env.rollout(item, "", agent)
    task, _ = agent.tasks[0]
    assert agent.seen_files == [["input.xlsx"]]  # the input workbook only, no answer
    assert task.workspace_only and task.shell and task.skill_name == "spreadsheetbench"
    assert "output.xlsx" in task.prompt and sys.executable in task.prompt
    # The agent's commands may read the Python that has openpyxl, and nothing else outside.
    assert Path(openpyxl.__file__).resolve().parents[1] in task.readable
    assert (result.hard, result.soft) == (1.0, 1.0)


async def test_spreadsheetbench_half_right_no_output_and_a_link_out(tmp_path):
    env = sheets_env(tmp_path, "claude_code")
    item = env.load_split("val")[0]
    half = await env.rollout(
        item, "", ScriptedAgent(run_solution(PROGRAM.replace("range(2, 4)", "range(2, 3)")))
    )
    assert (half.hard, half.soft) == (0.0, 0.5) and "Data!C3" in half.explanation
    nothing = await env.rollout(item, "", ScriptedAgent(lambda ws: None))
    assert (nothing.hard, nothing.soft) == (0.0, 0.0)
    assert "saved no output.xlsx" in nothing.explanation
    answer = Path(item.data["cases"][0]["answer"])
    link = await env.rollout(
        item, "", ScriptedAgent(lambda ws: (ws / "output.xlsx").symlink_to(answer))
    )
    # An output that points at the answer workbook is never read as the agent's.
    assert link.hard == 0.0 and "saved no output.xlsx" in link.explanation


async def test_spreadsheetbench_several_cases_get_numbered_workbooks(tmp_path):
    assert workbook_names(1) == [("input.xlsx", "output.xlsx")]
    env = sheets_env(tmp_path, "codex", cases=2)
    item = env.load_split("val")[0]
    program = (
        "import openpyxl\n"
        "for n in (1, 2):\n"
        "    wb = openpyxl.load_workbook(f'input_{n}.xlsx')\n"
        "    ws = wb['Data']\n"
        "    for row in range(2, 4):\n"
        "        ws[f'C{row}'] = ws[f'A{row}'].value + ws[f'B{row}'].value\n"
        "    wb.save(f'output_{n}.xlsx')\n"
    )
    agent = ScriptedAgent(run_solution(program))
    result = await env.rollout(item, "", agent)
    assert agent.seen_files == [["input_1.xlsx", "input_2.xlsx"]]
    assert "input_2.xlsx -> output_2.xlsx" in agent.tasks[0][0].prompt
    assert (result.hard, result.soft) == (1.0, 1.0)
    only_first = await env.rollout(
        item, "", ScriptedAgent(run_solution(program.replace("(1, 2)", "(1,)")))
    )
    assert only_first.hard == 0.0 and "saved no output_2.xlsx" in only_first.explanation
