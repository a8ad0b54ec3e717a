"""`docvqa`: the image travels as a base64 data URI; ANLS scoring; a text-only backend is
refused before any call; the missing-data error; `materialize` from the hub's rows."""

import base64
import json

import pytest

from core.config import EnvConfig
from core.models.client import ModelClient, RoleRuntime
from core.models.scripted import ScriptedBackend
from core.models.types import BadRequestError
from envs import get_environment
from envs.docvqa.materialize import materialize
from envs.split_data import MissingDataError
from tests.envs.benchmarks.fixtures import SPLIT_IDS, scripted_client, write_manifest

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def materialised(tmp_path):
    fields = {
        i: {"image_path": f"data/docvqa_images/q{i}_d9.png", "topic": "form|table"}
        for ids in SPLIT_IDS.values()
        for i in ids
    }
    manifest = write_manifest(tmp_path / "manifest", **fields)
    rows = [
        {
            "questionId": i,
            "question": f"What is the date on page {i}?",
            "answers": ["March 3, 1998", "3/3/98"],
            "docId": 9,
            "image": {"bytes": base64.b64encode(PNG).decode(), "path": None},
        }
        for ids in SPLIT_IDS.values()
        for i in ids
    ]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "validation.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    report = materialize(tmp_path / "src", tmp_path / "out", manifest)
    env = get_environment(
        EnvConfig(name="docvqa", manifest_dir=str(manifest), data_dir=str(tmp_path / "out"))
    )
    return env, report


def test_materialize_writes_items_and_images(materialised, tmp_path):
    env, report = materialised
    assert report.counts == {"train": 2, "val": 1, "test": 1} and report.files == 4
    assert (tmp_path / "out" / "images" / "qt1_d9.png").read_bytes() == PNG
    item = env.load_split("train")[0]
    assert item.task_type == "form" and item.data["answers"] == ["March 3, 1998", "3/3/98"]


async def test_rollout_sends_the_page_as_a_data_uri(materialised):
    env, _ = materialised
    seen = []

    def responder(request):
        seen.append(request)
        return "<answer>3/3/98</answer>"

    item = env.load_split("val")[0]
    async with scripted_client(responder) as client:
        result = await env.rollout(item, "", client.bind("target"))
    parts = seen[0].messages[-1]["content"]
    image = next(p for p in parts if p["type"] == "image_url")
    assert image["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert (result.hard, result.soft) == (1.0, 1.0)
    assert "base64" not in json.dumps(result.trajectory)  # a placeholder, not the bytes


def test_anls_is_the_soft_score(materialised):
    env, _ = materialised
    item = env.load_split("val")[0]
    score = env.score(item, "March 3, 1999")
    assert score.hard == 0.0 and 0.9 < score.soft < 1.0 and "ANLS" in score.explanation


async def test_a_text_only_backend_is_refused_before_any_call(materialised):
    env, _ = materialised
    backend = ScriptedBackend(lambda r: "never")
    client = ModelClient(
        {
            "target": RoleRuntime(
                role="target", kind="local", model="smollm2", backend=backend, accepts_images=False
            )
        }
    )
    with pytest.raises(BadRequestError, match="text-only backend"):
        await env.rollout(env.load_split("val")[0], "", client.bind("target"))
    assert backend.requests == []


def test_missing_data_error(tmp_path):
    env = get_environment(EnvConfig(name="docvqa", data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="skillopt data materialize docvqa"):
        env.load_split("val")
