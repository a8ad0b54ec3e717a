"""`capitals`: short questions about the capitals of sovereign states, in both directions.

The first environment that runs fully offline with data we ship (DESIGN §6): the questions
are ours, the facts are public (see envs/capitals/README.md). One chat call per item: the
skill as the system message (when non-empty), the question as the user message. Scored by
normalised exact match (hard) and token F1 (soft), each the best over the reference and the
item's accepted aliases (envs/scoring.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.environment.contract import SPLITS, CompleteFn, EnvError, RolloutResult, Score, TaskItem
from core.errors import unreadable
from core.models.types import Message, RetriesExhausted, TransientError
from envs.scoring import explain_model_error, score_answer
from envs.split_env import scored_result

NAME = "capitals"
VERSION = "capitals-2"  # 2: ids that do not spell countries or capitals
DATA_FILE = "capitals.jsonl"
DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data"
TASK_TYPES = ("country_to_capital", "capital_to_country")
DIRECTIONS = ("both", *TASK_TYPES)
OPTIONS = {"directions": DIRECTIONS}


def item_id(question: str) -> str:
    """An item's id: a hash of its question. Ids are shown to whoever answers handoff
    prompts (state.json, gate.json), so they must not spell a country or a capital."""
    return "cap-" + hashlib.sha256(f"capitals:{question}".encode()).hexdigest()[:10]


def build_messages(item: TaskItem, skill_text: str) -> list[Message]:
    """What the target sees: the skill (if any) and the question, never the reference."""
    messages: list[Message] = []
    if skill_text.strip():
        messages.append({"role": "system", "content": skill_text})
    messages.append({"role": "user", "content": item.question})
    return messages


def read_items(data_file: Path) -> dict[str, TaskItem]:
    """All items of the data file, by id, in file order."""
    try:
        lines = data_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise EnvError(
            f"capitals data file not found: {data_file} (set env.data_dir to the folder "
            f"holding {DATA_FILE}, or leave it null for the shipped data)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvError(f"capitals data file {unreadable(data_file, exc)}") from None
    items: dict[str, TaskItem] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item = TaskItem(
                id=row["id"],
                task_type=row["task_type"],
                question=row["question"],
                answer=row["answer"],
                data={"aliases": list(row.get("aliases", [])), "country": row["country"]},
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise EnvError(f"{data_file}:{number}: malformed item ({exc})") from None
        if item.id in items:
            raise EnvError(f"{data_file}:{number}: duplicate item id {item.id!r}")
        items[item.id] = item
    return items


def read_manifest(path: Path) -> list[str]:
    """A split manifest: a JSON list of ids (strings, or objects with an "id" field)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EnvError(
            f"split manifest not found: {path} (regenerate it with "
            f"`python -m envs.capitals.make_manifests` or point env.manifest_dir at it)"
        ) from None
    except json.JSONDecodeError as exc:
        raise EnvError(f"{path}: malformed manifest JSON ({exc.msg}, line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EnvError(f"split manifest {unreadable(path, exc)}") from None
    if not isinstance(data, list):
        raise EnvError(f"{path}: a manifest must be a JSON list of ids")
    ids = []
    for entry in data:
        item_id = entry.get("id") if isinstance(entry, dict) else entry
        if not isinstance(item_id, str):
            raise EnvError(f"{path}: manifest entry {entry!r} is not an id")
        ids.append(item_id)
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise EnvError(f"{path}: id {dup!r} is listed more than once")
    return ids


def validate_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The environment's options with defaults filled in; unknown keys or values are errors."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        allowed = ", ".join(sorted(OPTIONS))
        raise EnvError(f"capitals: unknown env option(s) {', '.join(unknown)}; allowed: {allowed}")
    directions = options.get("directions", "both")
    if directions not in DIRECTIONS:
        raise EnvError(
            f"capitals: env.options.directions must be one of {', '.join(DIRECTIONS)}, "
            f"got {directions!r}"
        )
    return {"directions": directions}


class CapitalsEnvironment:
    name = NAME
    version = VERSION

    def __init__(
        self,
        manifest_dir: Path,
        data_dir: Path | None = None,
        options: Mapping[str, Any] | None = None,
    ):
        self.manifest_dir = Path(manifest_dir)
        self.data_dir = Path(data_dir) if data_dir is not None else DEFAULT_DATA_DIR
        self.options = validate_options(options or {})
        self._items: dict[str, TaskItem] | None = None

    def _all_items(self) -> dict[str, TaskItem]:
        if self._items is None:
            self._items = read_items(self.data_dir / DATA_FILE)
        return self._items

    def load_split(self, split: str) -> list[TaskItem]:
        """The split's items in manifest order (manifest ∩ data), filtered by `directions`.
        A manifest id missing from the data is an error: a silently shrunken split would
        make scores incomparable across runs."""
        if split not in SPLITS:
            raise EnvError(f"capitals: unknown split {split!r}; allowed: {', '.join(SPLITS)}")
        ids = read_manifest(self.manifest_dir / f"{split}.json")
        items = self._all_items()
        missing = [i for i in ids if i not in items]
        if missing:
            raise EnvError(
                f"{self.manifest_dir / f'{split}.json'}: {len(missing)} id(s) not in the data "
                f"file {self.data_dir / DATA_FILE}, e.g. {missing[0]!r}"
            )
        wanted = self.options["directions"]
        return [items[i] for i in ids if wanted == "both" or items[i].task_type == wanted]

    def score(self, item: TaskItem, prediction: str) -> Score:
        return score_answer(prediction, item.answer, item.data.get("aliases", ()))

    async def rollout(self, item: TaskItem, skill_text: str, complete: CompleteFn) -> RolloutResult:
        messages = build_messages(item, skill_text)
        try:
            completion = await complete(messages)
        except (TransientError, RetriesExhausted) as exc:
            # Only a server that kept failing scores this item zero. Anything else — a
            # rejected key, an unknown model, a bad base_url, the budget — propagates: it
            # would fail every item the same way, and a run of zeros that "finishes" hides it.
            aliases = item.data.get("aliases", ())
            explanation = explain_model_error(item.answer, aliases, str(exc))
            return RolloutResult.failed(item, messages, str(exc), explanation)
        # The raw reply, stripped: "A: Paris" or "The answer is Paris." are the scorer's call.
        prediction = completion.text.strip()
        score = self.score(item, prediction)
        trajectory = [*messages, {"role": "assistant", "content": completion.text}]
        return scored_result(item, prediction, score, trajectory, [completion])
