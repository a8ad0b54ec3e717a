"""The `capitals` environment: shipped data and manifests, splits, rollout and scoring."""

import json
import re
import shutil
from pathlib import Path

import pytest

from core.config import EnvConfig
from core.environment.contract import SPLITS, EnvError, TaskItem
from core.environment.verdicts import (
    VERDICT_CORRECT,
    VERDICT_EXTRA_WORDS,
    VERDICT_MODEL_ERROR,
    VERDICT_WRONG,
    verdict_of,
)
from core.errors import UserError
from core.models.types import (
    AuthError,
    BadRequestError,
    BudgetExceeded,
    Completion,
    ModelError,
    RetriesExhausted,
    TransientError,
    Usage,
)
from envs import get_environment
from envs.capitals.environment import (
    DEFAULT_DATA_DIR,
    TASK_TYPES,
    VERSION,
    CapitalsEnvironment,
    item_id,
    read_items,
)
from envs.capitals.make_manifests import DEFAULT_OUT, write_manifests
from envs.scoring import normalise_answer

# The shipped split sizes. A change here means the data or the split changed: bump VERSION.
EXPECTED_COUNTS = {"train": 227, "val": 78, "test": 84}


@pytest.fixture(scope="module")
def env() -> CapitalsEnvironment:
    return get_environment(EnvConfig(name="capitals"))


@pytest.fixture(scope="module")
def splits(env) -> dict[str, list[TaskItem]]:
    return {split: env.load_split(split) for split in SPLITS}


def test_all_splits_load_with_the_documented_counts(splits):
    assert {s: len(items) for s, items in splits.items()} == EXPECTED_COUNTS
    manifest = json.loads((DEFAULT_OUT / "split_manifest.json").read_text())
    assert manifest["counts"] == EXPECTED_COUNTS


def test_splits_do_not_overlap_and_cover_the_data(splits):
    ids = [item.id for items in splits.values() for item in items]
    assert len(ids) == len(set(ids))
    assert set(ids) == set(read_items(DEFAULT_DATA_DIR / "capitals.jsonl"))


def test_both_questions_about_a_country_share_a_split(splits):
    split_of_country: dict[str, str] = {}
    for split, items in splits.items():
        for item in items:
            assert split_of_country.setdefault(item.data["country"], split) == split


def test_every_item_is_well_formed(splits):
    items = [item for items in splits.values() for item in items]
    assert len({i.data["country"] for i in items}) == 195  # 193 UN members + 2 observers
    for item in items:
        assert item.task_type in TASK_TYPES
        assert item.question.strip().endswith("?")
        assert normalise_answer(item.answer), item.id
        assert all(normalise_answer(a) for a in item.data["aliases"]), item.id


def test_spot_checked_facts(env):
    by_question = {i.question: i for i in read_items(DEFAULT_DATA_DIR / "capitals.jsonl").values()}

    def forward(country: str):
        return by_question[f"What is the capital of {country}?"]

    def backward(capital: str):
        return by_question[f"{capital} is the capital of which country?"]

    france = forward("France")
    assert (france.question, france.answer) == ("What is the capital of France?", "Paris")
    assert backward("Paris").question == "Paris is the capital of which country?"
    assert backward("Paris").answer == "France"
    assert forward("Bolivia").answer == "Sucre"
    assert "La Paz" in forward("Bolivia").data["aliases"]
    assert forward("the Netherlands").answer == "Amsterdam"
    assert forward("Myanmar").answer == "Naypyidaw"
    assert env.score(forward("Myanmar"), "Nay Pyi Taw").hard == 1.0
    assert env.score(forward("South Africa"), "Cape Town").hard == 1.0
    assert env.score(forward("Sri Lanka"), "Kotte").hard == 1.0
    assert env.score(backward("Washington, D.C."), "USA").hard == 1.0
    assert env.score(backward("Yamoussoukro"), "Ivory Coast").hard == 1.0


def test_item_ids_do_not_spell_countries_or_capitals():
    """Issue 19: state.json and gate.json show item ids to whoever answers handoff prompts;
    `country-of-brussels` beside `capital-of-belgium` gave held-out answers away."""
    items = read_items(DEFAULT_DATA_DIR / "capitals.jsonl").values()
    words = set()
    for item in items:
        for name in (item.answer, item.data["country"], *item.data["aliases"]):
            words |= {w for w in re.findall(r"[a-z]+", name.lower()) if len(w) > 3}
    for item in items:
        assert item.id == item_id(item.question)
        assert not any(w in item.id for w in words), item.id


def test_manifests_regenerate_identically(tmp_path):
    write_manifests(tmp_path)
    for name in ("train.json", "val.json", "test.json", "split_manifest.json"):
        assert (tmp_path / name).read_bytes() == (DEFAULT_OUT / name).read_bytes(), name


def test_directions_option_filters(splits):
    env = get_environment(EnvConfig(options={"directions": "capital_to_country"}))
    items = env.load_split("val")
    assert items and {i.task_type for i in items} == {"capital_to_country"}
    assert len(items) == sum(i.task_type == "capital_to_country" for i in splits["val"])


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"direction": "both"}, "unknown env option(s) direction; allowed: directions"),
        ({"directions": "sideways"}, "must be one of both, country_to_capital"),
    ],
)
def test_bad_options_are_user_errors(options, needle):
    with pytest.raises(EnvError) as info:
        get_environment(EnvConfig(options=options))
    assert needle in str(info.value)
    assert isinstance(info.value, UserError)


def test_unknown_environment_names_the_allowed_ones_and_the_closest():
    with pytest.raises(EnvError) as info:
        get_environment(EnvConfig(name="capitol"))
    assert str(info.value).startswith(
        "unknown environment 'capitol'; did you mean 'capitals'? allowed: capitals, bigbench, "
        "repo_tasks, searchqa"
    )
    with pytest.raises(EnvError) as info:
        get_environment(EnvConfig(name="zzz"))
    assert "did you mean" not in str(info.value)  # nothing close: no guess


def test_unknown_split_and_missing_manifest(tmp_path, env):
    with pytest.raises(EnvError) as info:
        env.load_split("dev")
    assert "unknown split 'dev'; allowed: train, val, test" in str(info.value)
    empty = get_environment(EnvConfig(manifest_dir="nowhere"), root=tmp_path)
    with pytest.raises(EnvError) as info:
        empty.load_split("val")
    assert str(tmp_path / "nowhere" / "val.json") in str(info.value)


def test_manifest_id_missing_from_data_is_an_error(tmp_path):
    shutil.copytree(DEFAULT_OUT, tmp_path / "m")
    (tmp_path / "m" / "val.json").write_text(json.dumps(["cap-atlantis"]))
    env = get_environment(EnvConfig(manifest_dir="m"), root=tmp_path)
    with pytest.raises(EnvError, match="cap-atlantis"):
        env.load_split("val")


def test_relative_data_dir_resolves_against_root(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "capitals.jsonl").write_text(
        json.dumps(
            {
                "id": "cap-france",
                "task_type": "country_to_capital",
                "question": "What is the capital of France?",
                "answer": "Paris",
                "country": "France",
            }
        )
        + "\n"
    )
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train.json").write_text('[{"id": "cap-france"}]')
    env = get_environment(EnvConfig(manifest_dir="m", data_dir="d"), root=tmp_path)
    [item] = env.load_split("train")
    assert (item.answer, item.data["aliases"]) == ("Paris", [])


# ------------------------------------------------------------------------------ rollout


class FakeComplete:
    """Records the messages it is sent and replies with a fixed text."""

    def __init__(self, reply: str = "", error: Exception | None = None):
        self.reply, self.error = reply, error
        self.sent: list[list[dict]] = []

    async def __call__(self, messages, **settings):
        self.sent.append(messages)
        if self.error:
            raise self.error
        return Completion(
            text=self.reply,
            usage=Usage(input_tokens=12, output_tokens=3),
            finish_reason="stop",
            latency_s=0.25,
            model="fake",
            cached=True,
        )


FRANCE = TaskItem(
    id="cap-france",
    task_type="country_to_capital",
    question="What is the capital of France?",
    answer="Paris",
    data={"aliases": [], "country": "France"},
)


async def test_rollout_builds_the_messages_and_scores(env):
    fake = FakeComplete(" The capital of France is Paris.\n")
    result = await env.rollout(FRANCE, "Be brief.", fake)
    assert fake.sent == [
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is the capital of France?"},
        ]
    ]
    assert result.prediction == "The capital of France is Paris."
    assert (result.hard, result.reference, result.error) == (0.0, "Paris", None)
    assert verdict_of(result.explanation) == VERDICT_EXTRA_WORDS
    assert result.trajectory[-1] == {
        "role": "assistant",
        "content": " The capital of France is Paris.\n",
    }
    assert (result.input_tokens, result.output_tokens, result.latency_s, result.cached) == (
        12,
        3,
        0.25,
        True,
    )
    assert result.to_dict()["item_id"] == "cap-france"


async def test_empty_skill_sends_no_system_message(env):
    fake = FakeComplete("Paris")
    result = await env.rollout(FRANCE, "  \n", fake)
    assert fake.sent == [[{"role": "user", "content": "What is the capital of France?"}]]
    assert verdict_of(result.explanation) == VERDICT_CORRECT
    assert result.hard == result.soft == 1.0


async def test_reference_never_reaches_the_target(env, splits):
    fake = FakeComplete("no idea")
    checked = 0
    for item in splits["val"]:
        accepted = [item.answer, *item.data["aliases"]]
        if any(normalise_answer(a) in normalise_answer(item.question) for a in accepted):
            continue  # e.g. "What is the capital of Singapore?": the question names it
        result = await env.rollout(item, "Answer with just the name.", fake)
        sent = json.dumps(fake.sent[-1], ensure_ascii=False)
        assert all(a not in sent for a in accepted), item.id
        assert verdict_of(result.explanation) == VERDICT_WRONG
        assert f'expected "{item.answer}"' in result.explanation
        checked += 1
    assert checked > 60


@pytest.mark.parametrize(
    "error", [TransientError("server said 503"), RetriesExhausted("gave up: server said 503")]
)
async def test_transient_model_error_scores_zero(env, error):
    result = await env.rollout(FRANCE, "", FakeComplete(error=error))
    assert (result.hard, result.soft, result.prediction) == (0.0, 0.0, "")
    assert result.error == str(error)
    assert verdict_of(result.explanation) == VERDICT_MODEL_ERROR


@pytest.mark.parametrize(
    "error",
    [
        BudgetExceeded("cap reached"),
        AuthError("the key in OPENAI_API_KEY was rejected"),
        BadRequestError("model 'gpt-9' not found"),
        ModelError("the embedded model's weights are not installed"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_other_model_errors_propagate(env, error):
    with pytest.raises(type(error)) as info:
        await env.rollout(FRANCE, "", FakeComplete(error=error))
    assert info.value is error


def test_version_and_name(env):
    assert (env.name, env.version) == ("capitals", VERSION)


def test_shipped_paths_exist():
    assert (DEFAULT_DATA_DIR / "capitals.jsonl").is_file()
    assert Path(DEFAULT_OUT, "train.json").is_file()
