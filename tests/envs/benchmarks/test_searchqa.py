"""`searchqa`: loading the published materialisation's layout, the context trim, one
rollout through the scripted TEST DOUBLE, the missing-data error and `materialize`."""

import json
from pathlib import Path

import pytest

from core.config import EnvConfig
from core.environment.contract import EnvError
from envs import get_environment
from envs.searchqa.environment import trim_context
from envs.searchqa.materialize import materialize
from envs.split_data import MissingDataError
from tests.envs.benchmarks.fixtures import (
    SPLIT_IDS,
    scripted_client,
    write_manifest,
    write_split_dirs,
)

TINY = (
    Path(__file__).resolve().parents[4] / "shared" / "data" / "searchqa_tiny"
)  # beside the checkout


def item_row(item_id: str) -> dict:
    return {
        "id": item_id,
        "question": f"Who wrote book {item_id}?",
        "context": f"[DOC] [TLE] Book {item_id} [PAR] Book {item_id} was written by Ann Lee.",
        "answers": ["Ann Lee", "A. Lee"],
    }


def make_env(tmp_path, **options):
    manifest = write_manifest(tmp_path / "manifest")
    data = write_split_dirs(
        tmp_path / "data", {s: [item_row(i) for i in ids] for s, ids in SPLIT_IDS.items()}
    )
    return get_environment(
        EnvConfig(name="searchqa", manifest_dir=str(manifest), data_dir=str(data), options=options)
    )


@pytest.fixture
def env(tmp_path):
    return make_env(tmp_path)


def test_loads_the_split_layout(env):
    items = env.load_split("train")
    assert [i.id for i in items] == ["t1", "t2"]
    assert items[0].answer == "Ann Lee" and items[0].data["answers"] == ["Ann Lee", "A. Lee"]
    assert "[DOC]" not in items[0].question  # the question alone is what examples show


def test_context_is_trimmed_at_doc_boundaries():
    docs = "[DOC] " + "a" * 50 + " [DOC] " + "b" * 50 + " [DOC] " + "c" * 50
    kept = trim_context(docs, 120)
    assert kept == "[DOC] " + "a" * 50 + " [DOC] " + "b" * 50 + " "
    assert trim_context(docs, 10_000) == docs
    assert trim_context("[DOC] " + "z" * 100, 20) == ("[DOC] " + "z" * 100)[:20]  # one passage: cut


async def test_one_rollout_through_the_scripted_double(env):
    seen = []

    def responder(request):
        seen.append(request)
        return "Book v1 names its author.\n<answer>ann lee</answer>"

    item = env.load_split("val")[0]
    async with scripted_client(responder) as client:
        result = await env.rollout(item, "Answer with the name only.", client.bind("target"))
    assert (result.hard, result.soft, result.prediction) == (1.0, 1.0, "ann lee")
    system, user = (m["content"] for m in seen[0].messages)
    assert user == f"## Context\n{item.data['context']}\n\n## Question\n{item.question}"
    assert "## Skill\nAnswer with the name only.\n\n## The task" in system
    assert "Ann Lee" not in system + user.split("## Question")[1]  # the gold: only in context


async def test_skill_only_framing_overlay(tmp_path):
    """configs/features/searchqa_skill_only.yaml: our earlier framing, kept as an overlay."""
    env = make_env(tmp_path, harness="skill_only")
    seen = []

    def responder(request):
        seen.append(request)
        return "<answer>ann lee</answer>"

    item = env.load_split("val")[0]
    async with scripted_client(responder) as client:
        result = await env.rollout(item, "Answer with the name only.", client.bind("target"))
    assert result.hard == 1.0
    user = seen[0].messages[-1]["content"]
    assert "Book v1 was written" in user and item.question in user and "<answer>" in user
    assert seen[0].messages[0] == {"role": "system", "content": "Answer with the name only."}
    assert "Ann Lee" not in user.split("Question:")[1]  # the gold never follows the question


def test_scoring_wrong_and_partial(env):
    item = env.load_split("val")[0]
    assert env.score(item, "Bob").hard == 0.0
    assert 0 < env.score(item, "Ann").soft < 1


def test_missing_data_error_names_the_command(tmp_path):
    env = get_environment(EnvConfig(name="searchqa", data_dir=str(tmp_path / "none")))
    with pytest.raises(MissingDataError, match="skillopt data materialize searchqa --source PATH"):
        env.load_split("train")


def test_published_manifest_is_the_default(monkeypatch, tmp_path):
    monkeypatch.setenv("SKILLOPT_DATA", str(tmp_path))
    env = get_environment(EnvConfig(name="searchqa"))
    assert env.manifest_dir.name == "searchqa_id_split" and env.data_dir == tmp_path / "searchqa"


def test_materialize_from_the_publishers_rows(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    source = tmp_path / "lucadiliello_searchqa"
    (source / "data").mkdir(parents=True)
    # The public rows: `key` is the id; extra columns (labels) as the hub has them.
    rows = [
        {**item_row(i), "key": i, "labels": [[0, 1]]} for ids in SPLIT_IDS.values() for i in ids
    ]
    rows = [{k: v for k, v in r.items() if k != "id"} for r in rows]
    rows.append({**{k: v for k, v in item_row("zz").items() if k != "id"}, "key": "zz"})
    lines = "\n".join(json.dumps(r) for r in rows)
    (source / "data" / "train.jsonl").write_text(lines)
    report = materialize(source, tmp_path / "out", manifest)
    assert report.counts == {"train": 2, "val": 1, "test": 1}
    assert (report.extra_ids, report.extra_examples) == (1, ["zz"])
    written = json.loads((tmp_path / "out" / "train" / "items.json").read_text())
    assert written[0] == item_row("t1")
    env = get_environment(
        EnvConfig(name="searchqa", manifest_dir=str(manifest), data_dir=str(tmp_path / "out"))
    )
    assert len(env.load_split("test")) == 1


def test_materialize_refuses_a_source_missing_manifest_ids(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    (tmp_path / "src.jsonl").write_text(json.dumps({**item_row("t1"), "key": "t1"}))
    with pytest.raises(EnvError, match=r"3 manifest id\(s\) are not in the source"):
        materialize(tmp_path / "src.jsonl", tmp_path / "out", manifest)
    assert not (tmp_path / "out").exists()  # nothing half-written


@pytest.mark.skipif(not TINY.is_dir(), reason="shared/data/searchqa_tiny not beside the checkout")
def test_the_tiny_anchor_split_loads_as_its_own_manifest():
    env = get_environment(EnvConfig(name="searchqa", manifest_dir=str(TINY), data_dir=str(TINY)))
    assert [len(env.load_split(s)) for s in ("train", "val", "test")] == [12, 8, 8]
