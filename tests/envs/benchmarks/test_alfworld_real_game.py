"""`alfworld` on a real game: our env class plays a game file of the published format
(ALFWorld's own domain and grammar, a problem of ours: alfworld_game.py) through textworld's
PDDL engine and ALFWorld's wrappers, one scripted TEST DOUBLE call per step. Needs the
alfworld extra (`pip install -e '.[alfworld]'` from the checkout, which compiles textworld's planner
and so is not in the test extra); skipped without it."""

import pytest

pytest.importorskip("alfworld", reason="needs the alfworld extra (pip install -e '.[alfworld]')")
pytest.importorskip("fast_downward", reason="needs textworld[pddl] (the alfworld extra)")

from core.config import EnvConfig  # noqa: E402
from envs import get_environment  # noqa: E402
from envs.alfworld import episodes  # noqa: E402
from envs.alfworld.episodes import TextWorldEpisode, open_episode  # noqa: E402
from tests.envs.benchmarks.alfworld_game import SOLUTION, write_game  # noqa: E402
from tests.envs.benchmarks.fixtures import (  # noqa: E402
    scripted_client,
    write_manifest,
    write_split_dirs,
)


@pytest.fixture
def gamefile(tmp_path):
    return write_game(tmp_path / "games" / "pen" / "game.tw-pddl")


def test_the_real_game_reports_admissible_actions_and_the_won_flag(gamefile):
    episode = open_episode(gamefile)
    assert isinstance(episode, TextWorldEpisode)
    try:
        start = episode.reset()
        assert "you see a desk 1, and a drawer 1" in start.text
        assert start.text.endswith("Your task is to: put a pen in drawer.")
        assert start.admissible == ["go to desk 1", "go to drawer 1", "help", "inventory", "look"]
        assert episode.step("fly away").text == episodes.NOTHING
        for action in SOLUTION[:-1]:
            obs = episode.step(action)
            assert not obs.won
        assert SOLUTION[-1] in obs.admissible
        assert episode.step(SOLUTION[-1]).won
    finally:
        episode.close()


def test_episodes_reuse_the_planner_environment(gamefile):
    first = TextWorldEpisode(gamefile)
    first.reset()
    engine = first._pddl
    first.close()
    second = TextWorldEpisode(gamefile)
    try:
        assert second._pddl is engine  # one planner library for both, not one per episode
        assert second.reset().admissible[0] == "go to desk 1"
        concurrent = TextWorldEpisode(gamefile)
        assert concurrent._pddl is not engine  # an episode in flight never shares it
        concurrent.close()
    finally:
        second.close()


async def test_one_real_episode_through_the_env_and_the_scripted_double(tmp_path, gamefile):
    ids = {"train": ["g1"], "val": ["g2"], "test": ["g3"]}
    manifest = write_manifest(tmp_path / "manifest", ids)
    row = {"gamefile": str(gamefile), "task_type": "pick_and_place_simple"}
    data = write_split_dirs(tmp_path / "data", {s: [{"id": i[0], **row}] for s, i in ids.items()})
    env = get_environment(
        EnvConfig(
            name="alfworld",
            manifest_dir=str(manifest),
            data_dir=str(data),
            options={"max_steps": 8, "harness": "skill_only"},  # the prompts checked below
        )
    )
    prompts = []
    plan = iter(["look around", *SOLUTION])

    def responder(request):
        prompts.append(request.messages[-1]["content"])
        return f"<action>{next(plan)}</action>"

    async with scripted_client(responder) as client:
        result = await env.rollout(env.load_split("val")[0], "Be brief.", client.bind("target"))
    assert (result.hard, result.soft, result.prediction) == (1.0, 1.0, "won")
    assert len(prompts) == 6
    assert "Your task is to: put a pen in drawer." in prompts[0]
    assert "Admissible actions: go to desk 1; go to drawer 1; help; inventory; look" in prompts[0]
    assert "> look around\nNothing happens." in prompts[1]
    assert "Admissible actions:" in prompts[5] and "move pen 1 to drawer 1" in prompts[5]
    assert result.trajectory[-1]["content"] == "You move the pen 1 to the drawer 1."
