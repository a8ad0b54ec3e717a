"""What an agent CLI reports it spent must be a finite non-negative number: a
`total_cost_usd` of -5.0 drove a run's cost to -99.3 under a $0.05 cap, and NaN disabled
the cap. Now such a call is an error (retried) counted at its estimate, and the cap holds.

The CLIs here are FAKE `claude` / `codex` programs (test doubles: Python scripts printing
the CLIs' JSON event lines) that report the costs or token counts a test lines up, one per
call; the backends, client, retry policy and ledger are the real ones."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.ledger import UsageLedger
from core.models.types import AgentTask, BudgetExceeded, RetriesExhausted, Usage
from tests.core.models.helpers import FakeSleep

MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]

# Each call takes the next line of `reports` (raw JSON text of the reported number).
CLAUDE = """\
import json, sys
from pathlib import Path
sys.stdin.read()
here = Path(__file__).parent
count = int((here / "calls").read_text()) if (here / "calls").exists() else 0
(here / "calls").write_text(str(count + 1))
reports = (here / "reports").read_text().splitlines()
cost = reports[min(count, len(reports) - 1)]
print(json.dumps({"type": "system", "subtype": "init"}))
print('{"type": "result", "subtype": "success", "is_error": false, "result": "Paris", '
      '"usage": {"input_tokens": 10, "output_tokens": 3}, "total_cost_usd": ' + cost + '}')
"""

CODEX = """\
import json, sys
from pathlib import Path
sys.stdin.read()
here = Path(__file__).parent
count = int((here / "calls").read_text()) if (here / "calls").exists() else 0
(here / "calls").write_text(str(count + 1))
reports = (here / "reports").read_text().splitlines()
tokens = reports[min(count, len(reports) - 1)]
print(json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "Paris"}}))
print('{"type": "turn.completed", "usage": {"input_tokens": ' + tokens + ', "output_tokens": 3}}')
"""


def fake_cli(folder: Path, program: str, reports: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "cli"
    script.write_text(f"#!{sys.executable}\n{program}")
    script.chmod(0o755)
    (folder / "reports").write_text("\n".join(reports))
    return script


def calls_made(script: Path) -> int:
    return int((script.parent / "calls").read_text())


def client_for(tmp_path, backend, script, *, max_cost_usd=None, prices=None, max_retries=0):
    config = config_from_dict(
        {
            "run": {"runs_dir": str(tmp_path / "runs")},
            "models": {
                "target": {
                    "backend": backend,
                    "base_url": "http://127.0.0.1:9",  # never contacted by the fake
                    "model": "fake-model",
                    "binary": str(script),
                    "timeout_s": 30.0,
                    "max_retries": max_retries,
                },
                "prices": prices or {},
            },
            "budget": {"max_cost_usd": max_cost_usd},
            "cache": {"enabled": False},
        }
    )
    return build_model_client(config, environ={}, retry_sleep=FakeSleep())


async def test_a_negative_reported_cost_never_lowers_the_spend_and_the_cap_holds(tmp_path):
    script = fake_cli(tmp_path / "claude", CLAUDE, ["0.03", "-5.0", "0.03"])
    client = client_for(tmp_path, "claude_code", script, max_cost_usd=0.05)
    first = await client.complete(MESSAGES, role="target")
    assert first.usage.cost_usd == pytest.approx(0.03)
    with pytest.raises(RetriesExhausted, match=r"total_cost_usd=-5\.0, not a finite"):
        await client.complete(MESSAGES, role="target")
    snapshot = client.ledger.snapshot()
    # The bad call counts at its estimate: the mean of what this model reported so far.
    assert snapshot.cost_usd == pytest.approx(0.06)
    with pytest.raises(BudgetExceeded):  # 0.06 >= 0.05: nothing more is sent
        await client.complete(MESSAGES, role="target")
    await client.aclose()
    assert calls_made(script) == 2


@pytest.mark.parametrize("report", ["NaN", "Infinity", "-Infinity", "1e999", '"0.01"', "true"])
async def test_a_cost_that_is_not_a_finite_number_is_an_error_and_never_disables_the_cap(
    tmp_path, report
):
    script = fake_cli(tmp_path / "claude", CLAUDE, ["0.04", report, "0.04"])
    client = client_for(tmp_path, "claude_code", script, max_cost_usd=0.1, max_retries=1)
    await client.complete(MESSAGES, role="target")
    # The bad attempt is counted (at 0.04) and retried; the retry reports 0.04 again.
    second = await client.complete(MESSAGES, role="target")
    assert second.text == "Paris"
    snapshot = client.ledger.snapshot()
    assert math.isfinite(snapshot.cost_usd) and snapshot.cost_usd == pytest.approx(0.12)
    with pytest.raises(BudgetExceeded):
        await client.complete(MESSAGES, role="target")
    await client.aclose()


async def test_impossible_token_counts_from_codex_are_an_error_priced_at_the_estimate(tmp_path):
    script = fake_cli(tmp_path / "codex", CODEX, ["-1000000000", "NaN", "10"])
    prices = {"fake-model": {"input_per_mtok": 1.0, "output_per_mtok": 1.0}}
    client = client_for(tmp_path, "codex", script, prices=prices, max_retries=2)
    reply = await client.complete(MESSAGES, role="target")
    assert reply.text == "Paris" and reply.usage.input_tokens == 10
    snapshot = client.ledger.snapshot()
    assert snapshot.cost_usd > 0 and snapshot.input_tokens > 10  # two estimates + the call
    await client.aclose()


async def test_an_agent_run_reporting_a_negative_cost_is_counted_at_its_estimate(tmp_path):
    script = fake_cli(tmp_path / "claude", CLAUDE, ["0.02", "-5.0"])
    client = client_for(tmp_path, "claude_code", script, max_cost_usd=0.05)
    files = tmp_path / "files"
    files.mkdir()
    (files / "README.md").write_text("hello\n")
    task = AgentTask(prompt="Say hello.", files=files, skill_name="demo", check=lambda ws: None)
    outcome = await client.run_agent(task, "# skill", role="target")
    assert outcome.text == "Paris"
    with pytest.raises(RetriesExhausted, match="total_cost_usd=-5.0"):
        await client.run_agent(task, "# skill", role="target")
    assert client.ledger.snapshot().cost_usd == pytest.approx(0.04)
    await client.aclose()


def test_the_ledger_never_adds_a_negative_or_nan_cost_a_backend_hands_it():
    ledger = UsageLedger({}, cap_cost_usd=0.05)
    ledger.record("target", "m", Usage(10, 3, cost_usd=0.02), cached=False)
    for bad in (-5.0, float("nan"), float("inf")):
        ledger.record("target", "m", Usage(10, 3, cost_usd=bad), cached=False)
    assert ledger.snapshot().cost_usd == pytest.approx(0.08)
    with pytest.raises(BudgetExceeded):
        ledger.check_budget()


def test_a_journal_written_with_a_nan_cost_replays_without_it(tmp_path):
    from core.models.spend_journal import SpendJournal

    path = tmp_path / "spend.jsonl"
    entry = {"role": "target", "model": "m", "stage": "rollout", "cached": False}
    lines = [
        {**entry, "input_tokens": 1, "output_tokens": 1, "cost_usd": 0.01},
        {**entry, "input_tokens": 1, "output_tokens": 1, "cost_usd": float("nan")},
        {**entry, "input_tokens": 1, "output_tokens": 1, "cost_usd": -5.0},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ledger = UsageLedger({})
    ledger.attach_journal(SpendJournal(path))
    assert ledger.snapshot().cost_usd == pytest.approx(0.01)
