"""`alfworld`: episodes from recorded observation fixtures (made by us; a real game is played
in test_alfworld_real_game.py when the alfworld extra is installed), one model call per step with the admissible actions in
the prompt, the won flag as the score, the missing-data error and `materialize`."""

import json

import pytest

from core.config import EnvConfig
from core.environment.contract import EnvError
from envs import get_environment
from envs.alfworld.environment import read_action
from envs.alfworld.episodes import NOTHING, RecordedEpisode
from envs.alfworld.materialize import materialize
from envs.split_data import MissingDataError
from tests.envs.benchmarks.fixtures import write_manifest, write_split_dirs

START = (
    "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly "
    "around you, you see a desk 1, and a drawer 1.\n\nYour task is to: put a pen in drawer 1."
)
EPISODE = {
    "start": "room",
    "states": {
        "room": {
            "observation": START,
            "admissible": ["go to desk 1", "go to drawer 1", "look", "inventory"],
            "next": {"go to desk 1": "desk", "go to drawer 1": "drawer_empty_handed"},
        },
        "desk": {
            "observation": "You arrive at desk 1. On the desk 1, you see a pen 1.",
            "admissible": ["take pen 1 from desk 1", "go to drawer 1", "look"],
            "next": {"take pen 1 from desk 1": "holding"},
        },
        "drawer_empty_handed": {
            "observation": "You arrive at drawer 1. The drawer 1 is closed.",
            "admissible": ["open drawer 1", "go to desk 1"],
            "next": {"go to desk 1": "desk"},
        },
        "holding": {
            "observation": "You pick up the pen 1 from the desk 1.",
            "admissible": ["go to drawer 1", "put pen 1 in/on desk 1"],
            "next": {"go to drawer 1": "at_drawer"},
        },
        "at_drawer": {
            "observation": "You arrive at drawer 1. The drawer 1 is closed.",
            "admissible": ["open drawer 1", "go to desk 1"],
            "next": {"open drawer 1": "open"},
        },
        "open": {
            "observation": "You open the drawer 1. The drawer 1 is open. In it, you see nothing.",
            "admissible": ["put pen 1 in/on drawer 1", "close drawer 1"],
            "next": {"put pen 1 in/on drawer 1": "done"},
        },
        "done": {
            "observation": "You put the pen 1 in/on the drawer 1.",
            "admissible": [],
            "won": True,
        },
    },
}
SOLUTION = [
    "go to desk 1",
    "take pen 1 from desk 1",
    "go to drawer 1",
    "open drawer 1",
    "put pen 1 in/on drawer 1",
]


@pytest.fixture
def env(tmp_path):
    return recorded_env(tmp_path)


def recorded_env(tmp_path, **options):
    """The alfworld environment over three items that each play the recorded EPISODE."""
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "pen.json").write_text(json.dumps(EPISODE))
    manifest = write_manifest(
        tmp_path / "manifest", {"train": ["g1"], "val": ["g2"], "test": ["g3"]}
    )
    row = {"gamefile": "games/pen.json", "task_type": "pick_and_place_simple"}
    data = write_split_dirs(
        tmp_path / "data",
        {s: [{"id": i, **row}] for s, i in (("train", "g1"), ("val", "g2"), ("test", "g3"))},
    )
    (data / "games").mkdir()
    (data / "games" / "pen.json").write_text(json.dumps(EPISODE))
    return get_environment(
        EnvConfig(
            name="alfworld",
            manifest_dir=str(manifest),
            data_dir=str(data),
            options={"max_steps": 8, **options},
        )
    )


def test_recorded_episode_replays_and_ignores_unknown_actions(tmp_path):
    (tmp_path / "e.json").write_text(json.dumps(EPISODE))
    episode = RecordedEpisode(tmp_path / "e.json")
    assert episode.reset().admissible[0] == "go to desk 1"
    assert episode.step("fly away").text == NOTHING
    for action in SOLUTION:
        obs = episode.step(action)
    assert obs.won


async def test_an_episode_one_call_per_step_with_admissible_actions(tmp_path):
    """Our earlier framing (configs/features/alfworld_skill_only.yaml)."""
    from tests.envs.benchmarks.fixtures import scripted_client

    env = recorded_env(tmp_path, harness="skill_only")
    prompts = []
    plan = iter(["look around", *SOLUTION])  # one wasted step first

    def responder(request):
        prompts.append(request.messages[-1]["content"])
        return f"<action>{next(plan)}</action>"

    async with scripted_client(responder) as client:
        result = await env.rollout(
            env.load_split("val")[0], "Think step by step.", client.bind("target")
        )
    assert len(prompts) == 6 and (result.hard, result.soft) == (1.0, 1.0)
    assert "Admissible actions: go to desk 1; go to drawer 1; look; inventory" in prompts[0]
    assert "Your task is to: put a pen in drawer 1." in prompts[3]
    assert "> look around\nNothing happens." in prompts[1]


async def test_an_episode_not_won_within_max_steps_scores_zero(env):
    from tests.envs.benchmarks.fixtures import scripted_client

    async with scripted_client(lambda r: "look") as client:
        result = await env.rollout(env.load_split("test")[0], "", client.bind("target"))
    assert (result.hard, result.prediction) == (0.0, "not won")
    assert "not won within 8 steps" in result.explanation


async def test_the_published_harness_plays_with_tags_and_the_last_two_steps(env):
    """Fails on the old code: the skill was the system prompt, a tagless reply's first line
    was its action, and ten steps were shown."""
    from tests.envs.benchmarks.fixtures import scripted_client

    prompts = []
    plan = iter(["dance", "no tag here", *SOLUTION])

    def responder(request):
        prompts.append(request.messages)
        action = next(plan)
        return action if action == "no tag here" else f"<think>ok</think><action>{action}</action>"

    async with scripted_client(responder) as client:
        result = await env.rollout(env.load_split("val")[0], "Be quick.", client.bind("target"))
    assert (result.hard, len(prompts)) == (1.0, 7)
    system, user = (m["content"] for m in prompts[3])
    assert "Be quick." not in system and user.startswith("## Skill Knowledge\n")
    assert "Your task: put a pen in drawer 1." in user
    assert "[Observation 2: 'Nothing happens.', Action 2: 'look']" in user  # no tag: look
    assert "Observation 1:" not in user  # only the last two steps
    assert "[Observation 3: 'Nothing happens.', Action 3: 'go to desk 1']" in user


def test_actions_are_matched_to_the_admissible_ones():
    admissible = ["go to desk 1", "open drawer 1"]
    assert read_action("Go to desk 1.", admissible) == "go to desk 1"
    assert read_action("> open drawer 1\nbecause", admissible) == "open drawer 1"
    assert read_action("<action>dance</action>", admissible) == "dance"


def test_missing_data_error(tmp_path):
    env = get_environment(EnvConfig(name="alfworld", data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="skillopt data materialize alfworld"):
        env.load_split("train")


def test_materialize_checks_every_game_file(tmp_path):
    fields = {
        "g1": {
            "gamefile": "json_2.1.1/train/a/trial_1/game.tw-pddl",
            "task_type": "look_at_obj_in_light",
        },
        "g2": {
            "gamefile": "json_2.1.1/valid_seen/b/trial_2/game.tw-pddl",
            "task_type": "pick_two_obj_and_place",
        },
        "g3": {
            "gamefile": "json_2.1.1/valid_unseen/c/trial_3/game.tw-pddl",
            "task_type": "pick_clean_then_place_in_recep",
        },
    }
    manifest = write_manifest(
        tmp_path / "manifest", {"train": ["g1"], "val": ["g2"], "test": ["g3"]}, **fields
    )
    root = tmp_path / "alfworld_data"
    for entry in list(fields.values())[:2]:
        (root / entry["gamefile"]).parent.mkdir(parents=True)
        (root / entry["gamefile"]).write_text("{}")
    with pytest.raises(EnvError, match=r"1 game file\(s\) of the manifest are not under"):
        materialize(root, tmp_path / "out", manifest)
    (root / fields["g3"]["gamefile"]).parent.mkdir(parents=True)
    (root / fields["g3"]["gamefile"]).write_text("{}")
    report = materialize(root, tmp_path / "out", manifest)
    assert report.counts == {"train": 1, "val": 1, "test": 1}
    env = get_environment(
        EnvConfig(name="alfworld", manifest_dir=str(manifest), data_dir=str(tmp_path / "out"))
    )
    item = env.load_split("test")[0]
    assert item.data["gamefile"] == str((root / fields["g3"]["gamefile"]).resolve())
    assert item.task_type == "pick_clean_then_place_in_recep"
