"""The miner model by default where a capable one is configured (issue 37, round 6): with
`models.miner.backend: auto` a night and its dry run mine with the heuristic and then the
model whenever the role resolves to a real model (an API key, a base_url, a night
--backend), and with the heuristic alone where it would be the embedded demonstration
model. A dry run asks the same miner as the night, and the night after it repays no call
(the state dir's response cache); `--heuristic-only` keeps a dry run free; under handoff
a dry run waits for the miner's answers as the night does. Real CLI processes on the
greenhouse corpus (tests/sleep/corrections_world.py), a real HTTP server on loopback as
the miner model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import RoleConfig
from sleep.mine.with_model import uses_model_miner
from tests.sleep.corrections_world import HELD_OUT_CORPUS, CorrectionsWorld, lay_out
from tests.support.loopback_openai import LoopbackOpenAI, RecordedRequest, Reply

MINER_MODEL = "miner-model"
NO_TASKS = '{"tasks": []}'  # the heuristic's tasks are kept: the model adds none


@pytest.fixture
def world(tmp_path, monkeypatch) -> CorrectionsWorld:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    return lay_out(tmp_path / "world", HELD_OUT_CORPUS)


def _config(tmp_path: Path, miner: dict) -> Path:
    path = tmp_path / "night.json"
    path.write_text(json.dumps({"models": {"miner": miner}}), encoding="utf-8")
    return path


def _miner_calls(server: LoopbackOpenAI) -> list[RecordedRequest]:
    return [r for r in server.requests if "replayable tasks" in r.last_user]


def _answer(_request: RecordedRequest) -> Reply:
    return Reply(NO_TASKS)


def test_an_auto_miner_with_a_model_server_mines_the_dry_run_and_the_night_repays_nothing(
    world, tmp_path
):
    """Fails on the old code: `auto` never mined with a model, and a dry run never asked."""
    with LoopbackOpenAI(handler=_answer) as server:
        miner = {"backend": "auto", "base_url": server.base_url, "model": MINER_MODEL}
        config = str(_config(tmp_path, miner))
        dry = world.sleep("dry-run", "--config", config, "--json")
        plan = json.loads(dry.stdout)
        asked = len(_miner_calls(server))
        assert plan["mined_by"] == f"heuristic+openai:{MINER_MODEL}"
        assert asked == 2  # one prompt per routed skill (Claude Code's, Codex's)
        assert f"mined by heuristic+openai:{MINER_MODEL}" in dry.stderr

        night = world.sleep("run", "--config", config, "--json", ok=(0, 3))
        assert f"mined by heuristic+openai:{MINER_MODEL}" in night.stderr
        assert json.loads(night.stdout)["mined_by"] == f"heuristic+openai:{MINER_MODEL}"
        assert len(_miner_calls(server)) == asked  # every reply came from the cache


def test_a_heuristic_only_dry_run_asks_no_model(world, tmp_path):
    with LoopbackOpenAI(handler=_answer) as server:
        miner = {"backend": "auto", "base_url": server.base_url, "model": MINER_MODEL}
        dry = world.sleep(
            "dry-run", "--config", str(_config(tmp_path, miner)), "--heuristic-only", "--json"
        )
        assert json.loads(dry.stdout)["mined_by"] == "heuristic"
        assert server.requests == []


@pytest.mark.parametrize("backend", [None, "local"])
def test_auto_stays_heuristic_where_it_would_be_the_embedded_model(world, backend):
    """No key, no base_url, no capable --backend: the embedded model would write worse
    tasks than the heuristic, so none is asked (nothing starts it either)."""
    flag = ["--backend", backend] if backend else []
    dry = world.sleep("dry-run", "--json", *flag)
    assert json.loads(dry.stdout)["mined_by"] == "heuristic"
    assert not (world.state / "nights").exists()  # a free dry run still writes nothing


def test_under_handoff_a_dry_run_waits_for_the_miner_and_the_night_uses_its_answers(world):
    """Fails on the old code: a dry run never asked the miner, so it showed tasks the
    night (its miner on handoff) would not replay."""
    waiting = world.sleep("dry-run", "--backend", "handoff", "--json", ok=(3,))
    first = json.loads(waiting.stdout)
    assert first["status"] == "waiting" and first["mined_by"] == "heuristic+handoff:handoff"
    [prompt] = map(Path, first["pending"])
    assert prompt.is_file() and "-miner-" in prompt.name
    assert str(prompt.parent) in first["message"]

    answered = []
    for _ in range(4):  # one prompt per routed skill; each dry run stops at the first unanswered
        done = world.sleep("dry-run", "--backend", "handoff", "--json", ok=(0, 3))
        plan = json.loads(done.stdout)
        if done.returncode == 0:
            break
        for pending in map(Path, plan["pending"]):
            (pending.parent.parent / "answers" / pending.name).write_text(NO_TASKS)
            answered.append(pending.name)
    else:
        pytest.fail("the dry run kept waiting after its miner prompts were answered")
    assert plan["mined_by"] == "heuristic+handoff:handoff" and plan["skills"]
    assert len(answered) == 2

    status = world.sleep("status").stdout  # the dry run's folder is no unreadable night
    assert f"{first['night_id']}: planned" in status and "unreadable" not in status

    # two held-out tasks per skill once its corrections attach (sleep/mine/follow_up.py)
    night = json.loads(world.sleep("run", "--backend", "handoff", "--json",
                                   "--set", "sleep.min_val_tasks=2", ok=(3,)).stdout)  # fmt: skip
    waiting_for = night["message"]
    assert "(miner)" not in waiting_for  # its prompts were answered after the dry run
    assert "(replay-workspace)" in waiting_for  # the night went on to its replays
    assert night["mined_by"] == "heuristic+handoff:handoff"
    # a round resumed on the frozen tasks mines nothing and still says how they were mined
    # (fails on the old code: night.json said null)
    again = json.loads(world.sleep("run", "--backend", "handoff", "--json", ok=(3,)).stdout)
    assert again["mined_by"] == "heuristic+handoff:handoff"
    saved = json.loads((world.state / "nights" / night["night_id"] / "night.json").read_text())
    assert saved["mined_by"] == "heuristic+handoff:handoff"


def test_a_miner_that_fails_in_a_dry_run_is_one_line_naming_the_free_plan(world, tmp_path):
    with LoopbackOpenAI(handler=lambda _r: Reply("not json at all")) as server:
        miner = {"backend": "auto", "base_url": server.base_url, "model": MINER_MODEL}
        done = world.sleep("dry-run", "--config", str(_config(tmp_path, miner)), ok=(1,))
    [line] = done.stderr.strip().splitlines()[-1:]
    assert "unusable" in line and "--heuristic-only" in line
    assert "Traceback" not in done.stderr


def test_auto_resolves_by_key_and_base_url(monkeypatch):
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    assert not uses_model_miner(RoleConfig(backend="auto"))
    assert uses_model_miner(RoleConfig(backend="auto", base_url="http://127.0.0.1:9/v1"))
    assert uses_model_miner(RoleConfig(backend="handoff"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-placeholder")
    assert uses_model_miner(RoleConfig(backend="auto"))
