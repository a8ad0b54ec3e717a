"""Issue 19: a training run with the optimizer on handoff, answered in rounds by a TEST
DOUBLE person (tests/support/handoff_answerer.py), from the command line: every round
waits (exit 3, status `waiting`, every waiting prompt listed on stderr and in an event),
the last one finishes (exit 0), and the result equals the scripted optimizer's."""

from __future__ import annotations

import json
import re

import yaml

from core.run.events import read_events
from skillopt_tui.app.run_feed import RunFeed
from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.handoff_answerer import answer_round
from tests.support.train_scenario import scenario_config

PROMPT_NAME = re.compile(r"^\d{4}-[a-z0-9-]+-[0-9a-f]{16}\.md$")


def config_file(tmp_path, name: str, optimizer: dict) -> str:
    tree = scenario_config(tmp_path / name, strategy="llm")
    tree["models"]["optimizer"] = optimizer
    tree["models"]["handoff_dir"] = str(tmp_path / name / "handoff")
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(tree))
    return str(path)


def train(tmp_path, config: str, out) -> tuple[int, dict, str]:
    done = skillopt(tmp_path, "train", "--config", config, "--out", str(out), "--json")
    return done.returncode, json.loads(done.stdout or "{}"), done.stderr


def events(run) -> list[dict]:
    lines = (run / "events.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_handoff_optimizer_waits_each_round_then_matches_the_scripted_run(tmp_path):
    scripted_cfg = config_file(
        tmp_path,
        "scripted",
        {"backend": "scripted", "model": "tests.support.handoff_answerer:make_optimizer"},
    )
    code, expected, err = train(tmp_path, scripted_cfg, tmp_path / "scripted" / "run")
    assert code == 0, err

    handoff_cfg = config_file(tmp_path, "handoff", {"backend": "handoff"})
    folder, run = tmp_path / "handoff" / "handoff", tmp_path / "handoff" / "run"
    rounds = 0
    while True:
        code, summary, err = train(tmp_path, handoff_cfg, run)
        if code != 3:
            break
        rounds += 1
        assert rounds < 40, err
        assert "Traceback" not in err and "RetriesExhausted" not in err and "failed" not in err
        state = json.loads((run / "state.json").read_text())
        assert state["status"] == "waiting" and summary["status"] == "waiting"
        assert (folder / "answers").is_dir()
        waiting = sorted(p.name for p in (folder / "prompts").iterdir())
        waiting = [n for n in waiting if not (folder / "answers" / n).exists()]
        assert waiting and all(PROMPT_NAME.match(n) for n in waiting), waiting
        for name in waiting:  # every waiting prompt on the console and in the event
            assert name in err
        [last] = [e for e in events(run) if e["type"] == "AnswersWaiting"][-1:]
        assert sorted(p["file"] for p in last["prompts"]) == waiting
        assert not any(e["type"] == "RunFailed" for e in events(run))
        answer_round(folder)
    assert code == 0, err
    assert rounds >= 3  # analysts, then the epoch review, then the next step: in turns
    assert summary["status"] == "finished"
    for key in ("baseline_val", "best_val", "final_val", "best_version", "accepted_steps"):
        assert summary[key] == expected[key], key
    assert summary["test"] == expected["test"]
    assert (run / "best_skill.md").read_text() == (
        tmp_path / "scripted" / "run" / "best_skill.md"
    ).read_text()
    kinds = {n.split("-")[1] for n in (p.name for p in (folder / "prompts").iterdir())}
    assert {"analyst", "slow", "meta"} <= kinds
    # the Run tab counts each rollout once however many rounds replayed it (issue 19)
    shown = RunFeed().apply(read_events(run / "events.jsonl")).rollouts
    alone = RunFeed().apply(read_events(tmp_path / "scripted" / "run" / "events.jsonl")).rollouts
    assert len(shown) == len(alone)
    # usage counts each answered prompt once, with estimated tokens, and no cache hits
    optimizer = summary["usage"]["per_role"]["optimizer"]
    assert optimizer["calls"] == len(list((folder / "answers").iterdir()))
    assert optimizer["input_tokens"] > 0 and optimizer.get("cache_hits", 0) == 0


def test_eval_with_a_handoff_target_waits_then_scores_like_the_scripted_target(tmp_path):
    from tests.doubles.skill_sensitive_target import SkillSensitiveTarget

    skill = tmp_path / "skill.md"
    skill.write_text("# Capitals\n\n- Norway: Oslo\nAnswer with only the city name.\n")
    tree = scenario_config(tmp_path / "h")
    expected_cfg = tmp_path / "scripted.yaml"
    expected_cfg.write_text(yaml.safe_dump(tree))
    tree["models"]["target"] = {"backend": "handoff"}
    tree["models"]["handoff_dir"] = str(tmp_path / "h" / "handoff")
    handoff_cfg = tmp_path / "handoff.yaml"
    handoff_cfg.write_text(yaml.safe_dump(tree))
    args = ("eval", "--skill", str(skill), "--split", "val", "--json", "--config")
    waiting = skillopt(tmp_path, *args, str(handoff_cfg))
    assert waiting.returncode == 3, waiting.stderr
    assert "Traceback" not in waiting.stderr and "RetriesExhausted" not in waiting.stderr
    folder = tmp_path / "h" / "handoff"
    names = sorted(p.name for p in (folder / "prompts").iterdir())
    assert len(names) == 5 and all(n in waiting.stderr for n in names)  # every val item
    answer_round(folder, SkillSensitiveTarget())
    done = skillopt(tmp_path, *args, str(handoff_cfg))
    expected = skillopt(tmp_path, *args, str(expected_cfg))
    assert done.returncode == 0 == expected.returncode, done.stderr
    assert json.loads(done.stdout)["hard"] == json.loads(expected.stdout)["hard"] > 0
