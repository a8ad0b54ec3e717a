"""Where an ALFWorld episode's observations come from.

`TextWorldEpisode` plays a real ALFWorld game file (`*.tw-pddl` under `$ALFWORLD_DATA`)
through `textworld` with ALFWorld's demangler, asking for the admissible commands and the
won flag — the published setup. It needs `pip install alfworld` (which brings textworld) and
the game files from `alfworld-download`; neither can be fetched on an offline machine, so
this class is not exercised by our tests.

`RecordedEpisode` replays an observation fixture: a JSON state machine
`{"start": name, "states": {name: {"observation", "admissible", "won", "next": {action:
name}}}}`. An action with no recorded transition answers "Nothing happens." and stays put,
as ALFWorld does. Our tests use small fixtures of this shape, written by us.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.environment.contract import EnvError

NOTHING = "Nothing happens."


@dataclass(frozen=True)
class Observation:
    text: str
    admissible: list[str]
    won: bool = False


class Episode(Protocol):
    def reset(self) -> Observation: ...

    def step(self, action: str) -> Observation: ...

    def close(self) -> None: ...


class RecordedEpisode:
    def __init__(self, path: Path):
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            self._states: dict[str, dict[str, Any]] = data["states"]
            self._start = data["start"]
        except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
            raise EnvError(f"alfworld: unreadable episode fixture {path}: {exc}") from None
        self._state = self._start

    def _observe(self, text: str | None = None) -> Observation:
        state = self._states[self._state]
        return Observation(
            text or state["observation"], list(state.get("admissible", [])), bool(state.get("won"))
        )

    def reset(self) -> Observation:
        self._state = self._start
        return self._observe()

    def step(self, action: str) -> Observation:
        nxt = self._states[self._state].get("next", {}).get(action)
        if nxt is None:
            return self._observe(NOTHING)
        self._state = nxt
        return self._observe()

    def close(self) -> None:
        return None


class TextWorldEpisode:
    """A real ALFWorld game through textworld (see the module docstring: untested offline)."""

    def __init__(self, gamefile: Path):
        try:
            import textworld
            import textworld.gym
            from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
        except ImportError:
            raise EnvError(
                "alfworld: playing game files needs `pip install alfworld` (with textworld) "
                "and the games from `alfworld-download`"
            ) from None
        infos = textworld.EnvInfos(admissible_commands=True, won=True, extras=["gamefile"])
        env_id = textworld.gym.register_game(
            str(gamefile),
            request_infos=infos,
            wrappers=[AlfredDemangler(), AlfredInfos],
            max_episode_steps=1000,
        )
        self._env = textworld.gym.make(env_id)

    def reset(self) -> Observation:
        obs, infos = self._env.reset()
        return Observation(obs, list(infos["admissible_commands"]), bool(infos.get("won")))

    def step(self, action: str) -> Observation:
        obs, _score, _done, infos = self._env.step(action)
        return Observation(obs, list(infos["admissible_commands"]), bool(infos.get("won")))

    def close(self) -> None:
        self._env.close()


def open_episode(gamefile: Path) -> Episode:
    if gamefile.suffix == ".json":
        return RecordedEpisode(gamefile)
    return TextWorldEpisode(gamefile)
