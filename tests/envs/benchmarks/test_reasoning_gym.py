"""`reasoning_gym`: seeded disjoint splits from the library's generators, one rollout through
the scripted TEST DOUBLE, the generator's own scorer behind our explanation, option errors,
and the one-line error when the extra is not installed."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.config import EnvConfig, load_config
from core.environment.contract import SPLITS, EnvError
from core.environment.verdicts import (
    VERDICT_CORRECT,
    VERDICT_EMPTY,
    VERDICT_EXTRA_WORDS,
    VERDICT_WRONG,
    verdict_of,
)
from envs import PROJECT_ROOT, get_environment
from envs.reasoning_gym.generators import INSTALL_HINT, MissingExtraError
from tests.envs.benchmarks.fixtures import scripted_client

SMALL_SUMS = {"chain_sum": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1}}
SMALL = {"dataset_config": SMALL_SUMS, "train_size": 20, "val_size": 10, "test_size": 10}


def env_for(**options):
    return get_environment(EnvConfig(name="reasoning_gym", options=options))


def test_splits_are_seeded_sized_and_disjoint():
    env = env_for(train_size=30, val_size=10, test_size=20, seed=3)
    splits = {s: env.load_split(s) for s in SPLITS}
    assert {s: len(v) for s, v in splits.items()} == {"train": 30, "val": 10, "test": 20}
    items = [i for split in splits.values() for i in split]
    assert len({i.id for i in items}) == 60 and len({i.question for i in items}) == 60
    assert all(i.id.startswith("chain_sum:") and i.task_type == "chain_sum" for i in items)
    again = env_for(train_size=30, val_size=10, test_size=20, seed=3).load_split("test")
    assert [(i.id, i.question, i.answer) for i in again] == [
        (i.id, i.question, i.answer) for i in splits["test"]
    ]
    other_seed = env_for(train_size=30, val_size=10, test_size=20, seed=4).load_split("test")
    assert [i.question for i in other_seed] != [i.question for i in splits["test"]]


def test_items_are_the_generators_own():
    import reasoning_gym

    env = env_for(**SMALL, seed=7)
    item = env.load_split("val")[0]
    index = int(item.id.split(":")[1])
    entry = reasoning_gym.create_dataset("chain_sum", seed=7, size=1000, **SMALL_SUMS["chain_sum"])[
        index
    ]
    assert (item.question, item.answer) == (entry["question"], entry["answer"])
    assert item.data["entry"]["metadata"]["num_terms"] == 2


def test_a_small_generator_space_repeats_itself_but_questions_stay_unique():
    # 1-digit a ± b has 200 distinct questions; 150 items need more than 150 draws.
    env = env_for(dataset_config=SMALL_SUMS, train_size=90, val_size=30, test_size=30)
    items = [i for s in SPLITS for i in env.load_split(s)]
    assert len({i.question for i in items}) == 150
    assert max(int(i.id.split(":")[1]) for i in items) >= 150
    too_many = env_for(dataset_config=SMALL_SUMS, train_size=150, val_size=50, test_size=50)
    with pytest.raises(EnvError, match="only 200 distinct questions"):
        too_many.load_split("train")


def test_several_datasets_share_each_split_interleaved():
    env = env_for(datasets=["chain_sum", "syllogism"], train_size=5, val_size=4, test_size=3)
    assert [i.task_type for i in env.load_split("train")] == [
        "chain_sum",
        "syllogism",
        "chain_sum",
        "syllogism",
        "chain_sum",
    ]
    assert [i.task_type for i in env.load_split("test")] == ["chain_sum", "syllogism", "chain_sum"]
    from_cli = env_for(datasets="chain_sum, syllogism")  # `--set env.options.datasets=a,b`
    assert from_cli.datasets == ["chain_sum", "syllogism"]


def test_the_version_follows_the_options():
    assert env_for(seed=1).version == env_for(seed=1).version
    assert env_for(seed=1).version != env_for(seed=2).version
    assert env_for(dataset_config=SMALL_SUMS).version != env_for().version


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"datasets": ["no_such_set"]}, "unknown dataset 'no_such_set'; reasoning-gym 0.1.25 has:"),
        ({"datasets": []}, "must be a list of dataset names"),
        ({"datasets": ["gcd", "gcd"]}, "names a dataset twice"),
        ({"dataset_config": {"gcd": {}}}, "dataset_config has gcd, which env.options.datasets"),
        ({"dataset_config": {"chain_sum": {"seed": 1}}}, "set the seed and sizes with"),
        ({"dataset_config": {"chain_sum": {"digits": 1}}}, "dataset_config.chain_sum is invalid"),
        (
            {"dataset_config": {"chain_sum": {"min_terms": 0}}},
            "dataset_config.chain_sum is invalid",
        ),
        ({"datasets": ["gcd", "lcm"], "val_size": 1}, "val_size must be at least one item"),
        ({"train_size": 0}, "train_size must be positive"),
        ({"shuffle": True}, "unknown env option(s) shuffle"),
    ],
)
def test_bad_options_are_one_line_errors(options, message):
    with pytest.raises(EnvError, match=None) as caught:
        env_for(**options).load_split("train")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def first_item(env, predicate):
    return next(i for s in SPLITS for i in env.load_split(s) if predicate(i))


RATIO = "len(answer) / len(prediction)"
# (prediction template, hard, soft, verdict) for a 4-digit answer `a` (`c`: with a comma).
# chain_sum's published scorer compares decimals ("tolerate sign, leading zeros and trailing
# decimals, strip commas") and otherwise gives len(answer) / len(prediction) when the
# answer is inside the prediction.
CHAIN_SUM_CASES = [
    ("{a}", 1.0, 1.0, VERDICT_CORRECT),
    ("+0{c}.00", 1.0, 1.0, VERDICT_CORRECT),
    ("{a}.", 1.0, 1.0, VERDICT_CORRECT),
    ("= {a}", 0.0, RATIO, VERDICT_EXTRA_WORDS),
    ("The sum is {a}", 0.0, RATIO, VERDICT_EXTRA_WORDS),
    ("{off_by_nine}", 0.0, 0.0, VERDICT_WRONG),
    ("one thousand and then some", 0.0, 0.0, VERDICT_WRONG),
    ("", 0.0, 0.0, VERDICT_EMPTY),
]


@pytest.mark.parametrize(("template", "hard", "soft", "verdict"), CHAIN_SUM_CASES)
def test_chain_sum_scoring_table(template, hard, soft, verdict):
    four_digits = {"chain_sum": {"min_terms": 2, "max_terms": 2, "min_digits": 4, "max_digits": 4}}
    env = env_for(dataset_config=four_digits)
    item = first_item(env, lambda i: int(i.answer) >= 1000)
    a = item.answer
    prediction = template.format(a=a, c=f"{int(a):,}", off_by_nine=int(a) + 9)
    score = env.score(item, prediction)
    expected_soft = len(a) / len(prediction) if soft == RATIO else soft
    assert (score.hard, verdict_of(score.explanation)) == (hard, verdict)
    assert score.soft == pytest.approx(expected_soft)
    assert score.explanation.startswith(f'expected "{a}"; got "{prediction}" — verdict: ')
    assert score.explanation.endswith(f"reasoning-gym score {expected_soft:.2f}")


def test_the_soft_score_is_the_generators_own_reward():
    env = env_for(datasets=["syllogism", "letter_counting"], train_size=6)
    for item in env.load_split("train"):
        generator = env._generators[item.task_type]
        for prediction in (item.answer, item.answer.lower(), f"{item.answer}!", "no idea", ""):
            expected = generator.score_answer(prediction, item.data["entry"])
            assert env.score(item, prediction).soft == pytest.approx(expected)


def test_a_case_only_difference_is_named_when_the_scorer_counts_case():
    env = env_for(datasets=["syllogism"])
    item = first_item(env, lambda i: i.answer == "Yes")
    score = env.score(item, "yes")
    assert (score.hard, verdict_of(score.explanation)) == (0.0, VERDICT_WRONG)
    assert "equal only if case" in score.explanation


async def test_one_rollout_through_the_scripted_double():
    env = env_for(**SMALL)
    item = env.load_split("test")[0]
    seen = []

    def responder(request):
        seen.append(request.messages)
        return f"Adding them up. <answer>{item.answer}</answer>"

    async with scripted_client(responder) as client:
        result = await env.rollout(item, "Add carefully.", client.bind("target"))
    assert (result.hard, result.soft, result.prediction) == (1.0, 1.0, item.answer)
    system, user = seen[0]
    assert system == {"role": "system", "content": "Add carefully."}
    assert user["content"] == f"{item.question}\n\nGive the final answer inside <answer></answer>."
    assert result.trajectory[-1]["content"].endswith(f"<answer>{item.answer}</answer>")
    assert result.task_type == "chain_sum" and result.item_id == item.id


async def test_strict_tag_reads_the_answer_as_reasoning_gym_does():
    item_of = {}
    for strict in (False, True):
        env = env_for(**SMALL, strict_tag=strict)
        item = item_of.setdefault("item", env.load_split("val")[0])
        async with scripted_client(lambda r, a=item.answer: f"{a}") as client:
            bare = await env.rollout(item, "", client.bind("target"))
        async with scripted_client(lambda r, a=item.answer: f"<answer>{a}") as client:
            unclosed = await env.rollout(item, "", client.bind("target"))
        if strict:
            assert (bare.hard, unclosed.hard) == (0.0, 0.0)
            assert "empty answer (no closed <answer> tag)" in bare.explanation
        else:
            assert (bare.hard, unclosed.hard) == (1.0, 1.0)


def test_without_the_extra_the_env_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # `import reasoning_gym` fails
    env = env_for()  # naming the environment never needs the library
    with pytest.raises(MissingExtraError) as caught:
        env.load_split("train")
    assert str(caught.value) == (
        f"reasoning_gym: the reasoning-gym generators are not installed: run `{INSTALL_HINT}`"
    )
    assert INSTALL_HINT.endswith("[reasoning-gym]'") and "-m pip install" in INSTALL_HINT
    from envs.listing import list_environments

    row = next(r for r in list_environments() if r.name == "reasoning_gym")
    assert (row.data, row.sizes) == (False, None)
    assert INSTALL_HINT in row.problem and INSTALL_HINT in row.needs[0]


def test_the_shipped_config_and_seed_skill():
    config = load_config(PROJECT_ROOT / "configs/reasoning_gym/default.yaml")
    env = get_environment(config.env)
    assert [len(env.load_split(s)) for s in SPLITS] == [60, 30, 40]
    assert all(i.task_type == "chain_sum" for i in env.load_split("val"))
    seed = (PROJECT_ROOT / config.train.initial_skill).read_text()
    assert "<answer></answer>" in seed and seed.startswith("# ")


def test_without_the_extra_train_is_one_line_with_exit_2_and_writes_nothing(tmp_path):
    # A module on PYTHONPATH that fails to import stands in for the uninstalled library.
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "reasoning_gym.py").write_text('raise ImportError("No module named reasoning_gym")')
    env = {**os.environ, "PYTHONPATH": f"{hidden}{os.pathsep}{PROJECT_ROOT}"}
    skillopt = Path(sys.executable).parent / "skillopt"
    result = subprocess.run(
        [
            str(skillopt),
            "train",
            "--config",
            str(PROJECT_ROOT / "configs/reasoning_gym/default.yaml"),
            "--out",
            str(tmp_path / "run"),
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        f"skillopt: error: reasoning_gym: the reasoning-gym generators are not installed: "
        f"run `{INSTALL_HINT}`"
    ]
    assert not (tmp_path / "run").exists()


def test_a_scorer_that_cannot_parse_the_answer_gives_it_nothing():
    # prime_factorization's published scorer raises ValueError on a non-number factor.
    env = env_for(datasets=["prime_factorization"], train_size=2, val_size=1, test_size=1)
    item = env.load_split("test")[0]
    with pytest.raises(ValueError):
        env._generators["prime_factorization"].score_answer("two and three", item.data["entry"])
    assert env.score(item, item.answer).hard == 1.0
    score = env.score(item, "two and three")
    assert (score.hard, score.soft, verdict_of(score.explanation)) == (0.0, 0.0, VERDICT_WRONG)
