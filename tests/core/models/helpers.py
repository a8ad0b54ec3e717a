"""Shared bits for the model-layer tests: a config pointed at a loopback server and a
fake sleep that records the retry policy's waits instead of waiting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.config import Config, config_from_dict

TEST_KEY_VAR = "SKILLOPT_TEST_KEY"
TEST_KEY = "sk-loopback-secret-0123456789"


class FakeSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def loopback_config(
    base_url: str,
    tmp_path: Path,
    *,
    backend: str = "openai",
    role: dict[str, Any] | None = None,
    budget: dict[str, Any] | None = None,
    prices: dict[str, Any] | None = None,
) -> Config:
    target = {
        "backend": backend,
        "base_url": base_url,
        "model": "loopback-model",
        "api_key_env": TEST_KEY_VAR,
        "timeout_s": 5.0,
        "max_retries": 2,
    }
    target.update(role or {})
    tree: dict[str, Any] = {
        "run": {"runs_dir": str(tmp_path / "runs")},
        "models": {"target": target, "prices": prices or {}},
        "cache": {"path": str(tmp_path / "cache.sqlite")},
    }
    if budget:
        tree["budget"] = budget
    return config_from_dict(tree)


ENV = {TEST_KEY_VAR: TEST_KEY}
USER = [{"role": "user", "content": "What is the capital of France?"}]
