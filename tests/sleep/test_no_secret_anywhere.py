"""Secrets typed into sessions never leave the harvest: after harvest, dry-run and a whole
night (the scripted TEST DOUBLE brain for every role, the miner included, so its prompt is
written too) and a handoff night (prompt files for a person), no planted secret is in any
file Sleep wrote (state directory, night folders, run directories, handoff prompts,
responses cache), in any git object of the skills repository, or in any output."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from sleep.state.settings import load_settings, save_settings
from tests.sleep.cli_world import make_world
from tests.sleep.night_double import INSTALL_PROMPT, parts_for
from tests.sleep.transcripts import claude_user, jsonl

J = "".join
BRAIN = "tests.sleep.night_double:brain"
SECRETS = {
    "aws_key_id": J(["AKIA", "IOSFODNN7QX4MPLE"]),
    "aws_secret": J(["wJalrXUtnFEMI/K7MDENG", "/bPxRfiCYQX4MPLEKEY"]),
    "password": J(["hunt3r", "22zq"]),
    "api_key": J(["Ab3dEf5hIj", "7kLm9nOp1q"]),
    "github": J(["ghp_", "Zq8Lm2Np9Rs4Tv8XAb3dEf5hIj7kLm9nOp1q"]),
    "openai": J(["sk-", "proj-", "Zq8Lm2Np9Rs4Tv8XAb3dEf5hIj7kLm9n"]),
    "url_password": J(["s3cr", "etPass9"]),
}
S = SECRETS
PROSE = [
    f"my access key is {S['aws_key_id']} and secret {S['aws_secret']}",
    f"the db password is {S['password']}",
    f"here is my api key {S['api_key']}",
    f"use token {S['github']} for the clone",
    f"OPENAI_API_KEY={S['openai']}",
    f"it reads postgres://app:{S['url_password']}@db.internal/app",
]


def _sessions(world) -> None:
    folder = world.claude / "projects" / "-proj"
    folder.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(parts_for(world.project, 10)):
        session = str(uuid.UUID(int=i + 100))
        secret = PROSE[i % len(PROSE)]
        prompts = [
            INSTALL_PROMPT.format(part=part),
            f"no, use pnpm instead of npm ({secret})",
            f"explain what the {part} module is for; {secret}",
        ]
        records = [
            claude_user(text, cwd=str(world.project), session=session,
                        timestamp=f"2026-11-{10 + i:02d}T10:0{k}:00Z")
            for k, text in enumerate(prompts)
        ]  # fmt: skip
        (folder / f"{session}.jsonl").write_bytes(jsonl(records))


def _scripted_config(root: Path) -> Path:
    roles = {r: {"backend": "scripted", "model": BRAIN}
             for r in ("target", "optimizer", "judge", "miner")}  # fmt: skip
    config = root / "night.yaml"
    config.write_text(json.dumps({"models": roles, "train": {
        "epochs": 1, "strategy": "llm", "gate": {"metric": "soft"},
        "schedule": {"kind": "constant", "start": 2, "end": 2},
        "slow_update": {"enabled": False}, "meta_skill": {"enabled": False}}}))  # fmt: skip
    return config


def _leaks(data: bytes) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret.encode() in data]


def _git_objects(repo: Path) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True, check=True,
    )  # fmt: skip
    return done.stdout


@pytest.mark.parametrize("backend", ["scripted", "handoff"])
def test_no_planted_secret_reaches_any_file_object_or_output(tmp_path, backend):
    world = make_world(tmp_path)
    _sessions(world)
    outputs = []

    def run(*args: str, codes=(0,)) -> subprocess.CompletedProcess:
        out = world.run(*args)
        assert out.returncode in codes, out.stderr
        outputs.append(out.stdout.encode() + out.stderr.encode())
        return out

    run("sleep", "init", "--project", str(world.project), "--yes")
    # parts_for guarantees two held-out tasks, not the default six: lower the setting
    settings = load_settings(world.state)
    save_settings(world.state, settings.model_copy(update={"min_val_tasks": 2}))
    night = ["--config", str(_scripted_config(tmp_path))] if backend == "scripted" else []
    run("sleep", "harvest", "--project", str(world.project), "--json", "--show-redactions")
    run("sleep", "dry-run", "--json", *night)
    # The harvest above was a preview: it moved no cursor, so the night reads the same
    # sessions as a first night would.
    assert not (world.state / "harvest-state.json").exists()
    result = run("sleep", "run", "--json", *night, codes=(0, 3))
    run("sleep", "status", "--json")
    summary = json.loads(result.stdout)
    if backend == "scripted":
        assert summary["status"] == "finished", summary
        assert any(o.get("staged") for o in summary["skills"].values())
        assert list(world.state.rglob("events.jsonl")), "no run directory written"
    else:
        assert summary["status"] == "waiting", summary
        prompts = list(world.state.rglob("prompts/*.md"))
        assert prompts, "no handoff prompt written"
        # the secret-bearing requests reached the night's frozen tasks (scanned below); they
        # are train-only (nothing to judge them by), so the first prompts are the val ones
        frozen = "".join(p.read_text() for p in world.state.rglob("nights/*/tasks.json"))
        assert "explain what the" in frozen

    written = [p for p in tmp_path.rglob("*") if p.is_file() and world.home not in p.parents]
    assert any(p.name == "sessions.json" for p in written)
    leaks = {str(p): _leaks(p.read_bytes()) for p in written}
    assert {p: found for p, found in leaks.items() if found} == {}
    repo = Path(load_settings(world.state).skills_repo)  # where init put it (XDG data)
    assert repo.is_dir() and world.project not in repo.parents
    assert _leaks(_git_objects(repo)) == []
    assert [_leaks(out) for out in outputs] == [[]] * len(outputs)
    # The transcripts did hold them (the test plants what it looks for).
    planted = b"".join(p.read_bytes() for p in world.home.rglob("*.jsonl"))
    assert sorted(_leaks(planted)) == sorted(SECRETS)
