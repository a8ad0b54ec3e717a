"""Multiple-choice mechanics for LiveMathematicianBench: the seeded per-item shuffle with
relabelling, and reading which label a reply chose.

The shuffle order is a pure function of (seed, item id) — sha256("<seed>:<id>") seeds the
RNG — so an item shows the same order in every split, step and run (the rollout cache can
rely on it), while the position of the correct answer no longer follows the source file.
"""

from __future__ import annotations

import hashlib
import random
import re

from envs.answer_tag import extract_answer
from envs.scoring import normalise_answer

LABELS = "ABCDEFGHIJ"
Choice = dict[str, str]  # {"label": "A", "text": "..."}


def shuffle_choices(
    item_id: str, choices: list[Choice], correct: str, seed: int
) -> tuple[list[Choice], str]:
    """(choices relabelled A, B, ... in the seeded order, the correct choice's new label)."""
    order = list(choices)
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()
    random.Random(int(digest[:16], 16)).shuffle(order)
    relabelled, new_correct = [], ""
    for index, choice in enumerate(order):
        label = LABELS[index]
        relabelled.append({"label": label, "text": choice["text"]})
        if choice["label"] == correct:
            new_correct = label
    return relabelled, new_correct


_LABEL_TOKEN = re.compile(r"^[\(\[]?([A-Za-z])[\)\]\.:]?$")


def _as_label(text: str, labels: set[str]) -> str | None:
    match = _LABEL_TOKEN.match(text.strip())
    if match and match.group(1).upper() in labels:
        return match.group(1).upper()
    return None


def read_choice(
    reply: str, choices: list[Choice], untagged: str = "whole"
) -> tuple[str | None, str]:
    """(label, rule): the answer tag holding a label; else the tag's (or reply's) text equal
    to one choice's text after normalisation; else the reply's first token as a label.
    `untagged` "last_line" (the published harness): an untagged reply's answer is its last
    line, which may itself be a label, and the first token is the answer's, not the reply's."""
    labels = {c["label"] for c in choices}
    answer, tagged = extract_answer(reply, untagged=untagged)
    published = untagged == "last_line"
    if tagged or published:
        label = _as_label(answer, labels)
        if label:
            return label, "the answer tag" if tagged else "the last line"
    wanted = normalise_answer(answer)
    for choice in choices:
        if wanted and normalise_answer(choice["text"]) == wanted:
            return choice["label"], "the exact choice text"
    tokens = (answer if published else reply).split()
    if tokens:
        label = _as_label(tokens[0], labels)
        if label:
            return label, "the first token"
    return None, "no rule"
