"""`bigbench`: the vendored slices load on their seeded manifests, render their questions,
score with their accepted answers, and roll out through the scripted TEST DOUBLE."""

import json

import pytest

from core.config import EnvConfig
from core.environment.contract import SPLITS, EnvError
from envs import get_environment
from envs.bigbench.environment import DATA_DIR, TASKS


def env_for(task):
    return get_environment(EnvConfig(name="bigbench", options={"task": task}))


@pytest.mark.parametrize("task", TASKS)
def test_each_slice_loads_disjoint_seeded_splits(task):
    env = env_for(task)
    splits = {s: env.load_split(s) for s in SPLITS}
    assert {s: len(v) for s, v in splits.items()} == {"train": 120, "val": 60, "test": 120}
    ids = [i.id for items in splits.values() for i in items]
    assert len(set(ids)) == len(ids) and all(i.startswith(f"{task}-") for i in ids)
    assert all(i.question and i.answer for items in splits.values() for i in items)


def test_questions_and_answers_follow_the_task_files():
    sports = env_for("sports_understanding").load_split("val")[0]
    assert sports.question.startswith("Is this sentence plausible or implausible? ")
    assert sports.answer in ("plausible", "implausible")
    date = env_for("date_understanding").load_split("val")[0]
    assert "Options: " in date.question and date.answer in date.question
    count = env_for("object_counting").load_split("val")[0]
    source = {
        json.loads(line)["id"]: json.loads(line)
        for line in (DATA_DIR / "object_counting.jsonl").open()
    }
    assert [count.answer, *count.data["aliases"]] == source[count.id]["target"]


def test_object_counting_accepts_the_digit_and_the_word():
    env = env_for("object_counting")
    item = next(i for i in env.load_split("train") if i.data["aliases"])
    assert env.score(item, item.answer).hard == 1.0
    assert env.score(item, item.data["aliases"][0]).hard == 1.0
    assert env.score(item, "I have many").hard == 0.0


async def test_one_rollout_through_the_scripted_double():
    from tests.envs.benchmarks.fixtures import scripted_client

    env = env_for("sports_understanding")
    item = env.load_split("test")[0]
    async with scripted_client(lambda r: f" {item.answer}\n") as client:
        result = await env.rollout(item, "Answer plausible or implausible.", client.bind("target"))
    assert (result.hard, result.prediction) == (1.0, item.answer)
    assert result.trajectory[0]["content"] == "Answer plausible or implausible."


def test_unknown_task_is_an_error():
    with pytest.raises(EnvError, match="task must be one of sports_understanding"):
        env_for("logical_deduction")


def test_notice_and_licence_ship_with_the_data():
    notice = (DATA_DIR.parent / "NOTICE.md").read_text()
    assert "Apache License" in notice and "bigbench==1.0.0" in notice
    assert "Apache License" in (DATA_DIR / "LICENSE-Apache-2.0.txt").read_text()
