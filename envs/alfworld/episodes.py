"""Where an ALFWorld episode's observations come from.

`TextWorldEpisode` plays a real ALFWorld game file (`*.tw-pddl` under `$ALFWORLD_DATA`)
through `textworld` with ALFWorld's demangler, asking for the admissible commands and the
won flag — the published setup. It needs the alfworld extra (core.install_hint says how to add it,
which brings textworld and compiles its fast-downward planner)
and the game files from `alfworld-download`, which an offline machine cannot fetch. Our tests play a small game of
our own in the same format instead (ALFWorld's shipped domain and grammar, a problem
written by us; tests/envs/benchmarks/alfworld_game.py) when the extra is installed.

`RecordedEpisode` replays an observation fixture: a JSON state machine
`{"start": name, "states": {name: {"observation", "admissible", "won", "next": {action:
name}}}}`. An action with no recorded transition answers "Nothing happens." and stays put,
as ALFWorld does. Our tests use small fixtures of this shape, written by us.
"""

from __future__ import annotations

import json
import queue
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from core.environment.contract import EnvError
from core.install_hint import install_extra

NOTHING = "Nothing happens."
INSTALL_HINT = install_extra("alfworld")


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


# Idle textworld PDDL environments, reused by later episodes (see TextWorldEpisode).
_IDLE_PDDL_ENVS: queue.SimpleQueue[Any] = queue.SimpleQueue()


class TextWorldEpisode:
    """A real ALFWorld game played by textworld's PDDL environment, wrapped as ALFWorld
    wraps it (its demangler names objects "pen 1", "drawer 1", ...).

    The environment is built directly, as ALFWorld's own game generator does, rather than
    through `textworld.gym`, and reused: each textworld PDDL environment loads a private
    copy of the fast-downward planner library and never unloads it (about 1.3 MB and five
    memory mappings per episode, for every rollout of a run), and unloading it by hand
    crashes the interpreter at exit. A closed episode hands its environment to the next
    one, so a run holds as many as it plays at once."""

    def __init__(self, gamefile: Path):
        try:
            import textworld
            from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredInfos
            from textworld.envs import PddlEnv
        except ImportError:
            raise EnvError(
                f"alfworld: playing game files needs the alfworld extra (`{INSTALL_HINT}`, "
                "which builds textworld's planner from source) and the games from "
                "`alfworld-download`"
            ) from None
        try:
            self._pddl = _IDLE_PDDL_ENVS.get_nowait()
        except queue.Empty:
            infos = textworld.EnvInfos(admissible_commands=True, won=True, extras=["gamefile"])
            self._pddl = PddlEnv(infos)
        self._env = AlfredInfos(AlfredDemangler(self._pddl))
        try:
            self._env.load(str(gamefile))
        except Exception as exc:  # textworld raises bare errors for unreadable game data
            self.close()
            raise EnvError(f"alfworld: cannot load game file {gamefile}: {exc}") from None

    @staticmethod
    def _observe(state: Any) -> Observation:
        return Observation(
            state.feedback, list(state["admissible_commands"]), bool(state.get("won"))
        )

    def reset(self) -> Observation:
        return self._observe(self._env.reset())

    def step(self, action: str) -> Observation:
        state, _score, _done = self._env.step(action)
        return self._observe(state)

    def close(self) -> None:
        if self._pddl is not None:
            _IDLE_PDDL_ENVS.put(self._pddl)
            self._pddl = None


def open_episode(gamefile: Path) -> Episode:
    if gamefile.suffix == ".json":
        return RecordedEpisode(gamefile)
    return TextWorldEpisode(gamefile)
