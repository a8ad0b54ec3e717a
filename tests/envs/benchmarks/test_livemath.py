"""`livemath`: the materialised layout, the seeded shuffle, one scripted rollout, the
missing-data error and `materialize` from the monthly qa_*_final.json files."""

import json

import pytest

from core.config import EnvConfig
from envs import get_environment
from envs.livemath.materialize import materialize
from envs.split_data import MissingDataError
from tests.envs.benchmarks.fixtures import scripted_client, write_manifest

IDS = {"train": ["202511:1", "202511:2"], "val": ["202512:1"], "test": ["202512:2"]}


def raw_question(month: str, no: int) -> dict:
    """One row as the publishers' monthly files hold it."""
    return {
        "month": month,
        "no": no,
        "paper_link": f"http://arxiv.org/abs/{month}.{no:05d}",
        "theorem_type": ["inequality"],
        "mcq": {
            "question": f"Which bound holds in paper {month}:{no}?",
            "choices": [
                {"label": "A", "text": "n^2"},
                {"label": "B", "text": "2^n"},
                {"label": "C", "text": "n log n"},
                {"label": "D", "text": "n!"},
            ],
            "correct_choice": {"label": "C", "text": "n log n"},
        },
    }


@pytest.fixture
def materialised(tmp_path):
    manifest = write_manifest(tmp_path / "manifest", IDS)
    for month in ("202511", "202512"):
        folder = tmp_path / "src" / "data" / month
        folder.mkdir(parents=True)
        rows = [raw_question(month, 1), raw_question(month, 2), raw_question(month, 3)]
        (folder / f"qa_{month}_final.json").write_text(json.dumps(rows))
    report = materialize(tmp_path / "src", tmp_path / "out", manifest)
    return manifest, tmp_path / "out", report


def env_for(manifest, data, **options):
    return get_environment(
        EnvConfig(name="livemath", manifest_dir=str(manifest), data_dir=str(data), options=options)
    )


def test_materialize_reports_counts_and_extra_rows(materialised):
    _, out, report = materialised
    assert report.counts == {"train": 2, "val": 1, "test": 1}
    assert report.extra_ids == 2 and set(report.extra_examples) == {"202511:3", "202512:3"}
    row = json.loads((out / "val" / "items.json").read_text())[0]
    assert row["id"] == "202512:1" and row["correct_choice"] == {"label": "C"}


def test_choices_are_shuffled_seeded_and_relabelled(materialised):
    manifest, out, _ = materialised
    items = env_for(manifest, out).load_split("train")
    again = env_for(manifest, out).load_split("train")
    assert [i.question for i in items] == [i.question for i in again]
    for item in items:
        correct = next(c for c in item.data["choices"] if c["label"] == item.answer)
        assert correct["text"] == "n log n"
        assert f"{item.answer}. n log n" in item.question
    plain = env_for(manifest, out, shuffle_choices=False).load_split("train")[0]
    assert plain.answer == "C" and "A. n^2\nB. 2^n" in plain.question


async def test_one_rollout_through_the_scripted_double(materialised):
    manifest, out, _ = materialised
    env = env_for(manifest, out)
    item = env.load_split("val")[0]

    async with scripted_client(lambda r: f"<answer>{item.answer}</answer>") as client:
        right = await env.rollout(item, "", client.bind("target"))
    wrong_label = next(c["label"] for c in item.data["choices"] if c["label"] != item.answer)
    async with scripted_client(lambda r: f"{wrong_label}. since ...") as client:
        wrong = await env.rollout(item, "", client.bind("target"))
    assert (right.hard, right.soft) == (1.0, 1.0)
    assert (wrong.hard, wrong.soft) == (0.0, 0.0) and "first token" in wrong.explanation
    user = right.trajectory[1]["content"]  # the question and the choices, nothing after
    assert user.endswith(f"{item.data['choices'][-1]['label']}. {item.data['choices'][-1]['text']}")


async def test_an_untagged_reply_is_read_from_its_last_line_as_published(materialised):
    """Fails on the old code: the first token of the reply ("Option") was no label."""
    manifest, out, _ = materialised
    env = env_for(manifest, out)
    item = env.load_split("val")[0]
    async with scripted_client(lambda r: f"Option by option, ...\n{item.answer}") as client:
        result = await env.rollout(item, "", client.bind("target"))
    assert result.hard == 1.0 and "last line" in result.explanation


def test_missing_data_error(tmp_path):
    env = get_environment(EnvConfig(name="livemath", data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="skillopt data materialize livemath"):
        env.load_split("test")


def test_published_manifest_counts():
    env = get_environment(EnvConfig(name="livemath"))
    from envs.split_data import split_sizes

    assert split_sizes(env.manifest_dir) == {"train": 35, "val": 17, "test": 125}
