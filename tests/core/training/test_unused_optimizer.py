"""`train.strategy: fewshot` never calls the optimizer: a run whose config names one says
so once at start, as a Notice event (console and events.jsonl), and runs on. The old code
said nothing."""

from __future__ import annotations

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.run.events import Notice, read_events
from core.training.setup import unused_optimizer_notice
from tests.core.training.test_trainer import of, train
from tests.support.train_scenario import scenario_config


async def test_a_fewshot_run_with_an_optimizer_set_warns_once(tmp_path):
    # The scenario names a scripted optimizer ("unused-by-fewshot") and runs fewshot.
    summary, events, _ = await train(tmp_path)
    assert summary.status == "finished"
    warned = [e.text for e in of(events, Notice) if "never calls the optimizer" in e.text]
    assert len(warned) == 1
    assert "models.optimizer is set (scripted:unused-by-fewshot)" in warned[0]
    assert "train.strategy llm" in warned[0]
    logged = [e for e in read_events(tmp_path / "run" / "events.jsonl") if isinstance(e, Notice)]
    assert [e.text for e in logged] == warned


def notice_for(tmp_path, optimizer: dict, **train) -> str | None:
    tree = scenario_config(tmp_path, **train)
    tree["models"]["optimizer"] = optimizer
    config = config_from_dict(tree)
    client = build_model_client(config, scripted={"target": lambda r: "x"})
    return unused_optimizer_notice(config, client)


def test_no_warning_when_the_optimizer_is_used_default_or_embedded(tmp_path):
    scripted = {"backend": "scripted", "model": "m"}
    assert notice_for(tmp_path, scripted, strategy="fewshot") is not None
    assert notice_for(tmp_path, scripted, strategy="llm") is None
    assert notice_for(tmp_path, {"backend": "auto"}, strategy="fewshot") is None
    # The embedded model is what fewshot is for (`auto` picks fewshot for it).
    assert notice_for(tmp_path, {"backend": "local"}, strategy="fewshot") is None
