"""Group a step's rollouts for the analysts and render them as prompt text.

Failures (hard == 0) and successes get different analysts, so they are grouped apart. The
shuffle uses the step's seed so a resumed run forms the same groups (and so hits the
response cache). Rendering clips each item to a character budget, keeping the parts an
analyst needs most (the question, the prediction, the evaluator's explanation with the
reference answer) whole where possible and clipping the long trajectory first. The
reference is shown here because these prompts go to the optimizer only.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.environment.contract import RolloutResult
from core.models.types import Message
from core.optimizer.strategy import EpochPair

FAILURE = "failure"
SUCCESS = "success"
SKILL_PLACEHOLDER = "[the current skill, shown above]"
PREVIOUS_SKILL_PLACEHOLDER = "[the previous epoch's skill, shown above]"
PAIR_OUTCOMES = ("regressed", "improved", "still_failing", "still_passing")


@dataclass(frozen=True)
class Group:
    kind: str  # FAILURE or SUCCESS
    index: int  # 0-based within its kind
    results: tuple[RolloutResult, ...]


def split_results(
    results: Sequence[RolloutResult], *, model_errors_fail: bool = True
) -> tuple[list[RolloutResult], list[RolloutResult]]:
    """(failures, successes) of the skill. As published, a rollout that failed with a
    model error scored 0 and is a failure; with `model_errors_fail` False
    (configs/features/skip_model_errors.yaml) it is in neither, since it says nothing
    about the skill (the target never answered). A failure whose replay lacked its inputs
    (`RolloutResult.lacked_inputs`) is in neither either: it was not the skill's to pass."""
    answered = [r for r in results if model_errors_fail or not r.error]
    failures = [r for r in answered if r.hard == 0 and not r.lacked_inputs]
    successes = [r for r in answered if r.hard != 0]
    return failures, successes


def make_groups(
    results: Sequence[RolloutResult], *, seed: int, size: int, model_errors_fail: bool = True
) -> list[Group]:
    """Failure groups first, then success groups. One `random.Random(seed)` shuffles the
    failures, then the successes, so the same seed and results give the same groups."""
    if size < 1:
        raise ValueError(f"group size must be at least 1, got {size}")
    rng = random.Random(seed)
    groups: list[Group] = []
    split = split_results(results, model_errors_fail=model_errors_fail)
    for kind, members in zip((FAILURE, SUCCESS), split, strict=True):
        rng.shuffle(members)
        for index, start in enumerate(range(0, len(members), size)):
            groups.append(Group(kind, index, tuple(members[start : start + size])))
    return groups


# -------------------------------------------------------------------------- rendering


def clip(text: str, max_chars: int) -> str:
    """Keep the head and the tail (answers tend to sit at the end) and say what was cut."""
    if len(text) <= max_chars:
        return text
    if max_chars < 40:
        return text[: max(max_chars, 0)]
    marker = f" […{len(text) - max_chars} chars clipped…] "
    keep = max(max_chars - len(marker), 0)
    head = keep * 2 // 3
    return text[:head] + marker + text[len(text) - (keep - head) :]


def message_text(message: Message) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        text = "\n".join(p for p in parts if p)
    else:
        text = "" if content is None else str(content)
    if message.get("tool_calls"):
        text += "\ntool_calls: " + json.dumps(
            message["tool_calls"], ensure_ascii=False, default=str
        )
    return text


def render_trajectory(
    messages: Sequence[Message], *, skill_text: str = "", placeholder: str = SKILL_PLACEHOLDER
) -> str:
    """The messages the target saw and sent. The skill itself is replaced by a pointer:
    the prompt shows it once, not once per item."""
    lines = []
    for message in messages:
        text = message_text(message)
        if skill_text.strip() and skill_text in text:
            text = text.replace(skill_text, placeholder)
        lines.append(f"[{message.get('role', '?')}] {text}")
    return "\n".join(lines)


def reference_line(result: RolloutResult, reference: str) -> str:
    """The reference under the environment's name for it, or as it labels itself."""
    label = result.reference_label
    return f"{label}: {reference}" if label else reference


# What an item's two scores mean, said once per item so no prompt has to explain them.
SCORES = "hard {hard:g} (1 = passed, 0 = failed) | soft {soft:.2f} (partial credit, 0 to 1)"
PREDICTION_SHOWN = "(the prediction above)"
_GOT_QUOTED = re.compile(r'got "([^"]*)"')


def render_result(
    result: RolloutResult, *, skill_text: str = "", max_chars: int | None = 2000
) -> str:
    """One item for an analyst prompt, at most about `max_chars` characters (None: the
    whole item, trajectory included: the unlimited-trajectory ablation). The prediction
    is shown once: the evaluator's quote of it and its copy in the last reply of the
    trajectory point back to the prediction line."""

    def cap(text: str, limit: int) -> str:
        return text if max_chars is None else clip(text, limit)

    field_cap = 0 if max_chars is None else max(max_chars // 4, 80)
    head = [
        f"id: {result.item_id} | task type: {result.task_type} | "
        + SCORES.format(hard=result.hard, soft=result.soft),
        "question: " + cap(result.question, field_cap),
        "prediction: " + cap(result.prediction, field_cap),
        reference_line(result, cap(result.reference, field_cap)),
        "evaluator: " + cap(_unquote_prediction(result.explanation, result.prediction), field_cap),
    ]
    if result.error:
        head.append("model error: " + clip(result.error, 200))
    text = "\n".join(head)
    trajectory = render_trajectory(
        _without_prediction(result.trajectory, result.prediction), skill_text=skill_text
    )
    if max_chars is None:
        return text + ("\ntrajectory:\n" + trajectory if trajectory else "")
    room = max_chars - len(text) - len("\ntrajectory:\n")
    if trajectory and room > 80:
        text += "\ntrajectory:\n" + clip(trajectory, room)
    return text


def _unquote_prediction(explanation: str, prediction: str) -> str:
    """The evaluator's `got "<prediction>"` (its whitespace-collapsed, maybe cut copy)
    pointing to the prediction line instead of repeating it."""
    flat = " ".join(prediction.split())

    def point(match: re.Match[str]) -> str:
        quoted = match.group(1).removesuffix("…")
        return f"got {PREDICTION_SHOWN}" if flat and flat.startswith(quoted) else match.group(0)

    return _GOT_QUOTED.sub(point, explanation, count=1)


def _without_prediction(messages: Sequence[Message], prediction: str) -> list[Message]:
    """The trajectory with the prediction in the last assistant reply replaced by a
    pointer (the reply's other text, such as answer tags or reasoning, stays)."""
    out = list(messages)
    if not prediction.strip():
        return out
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("role") == "assistant":
            content = out[i].get("content")
            if isinstance(content, str) and prediction in content:
                before, _, after = content.rpartition(prediction)  # the answer comes last
                out[i] = {**out[i], "content": before + PREDICTION_SHOWN + after}
            break
    return out


def render_results(
    results: Sequence[RolloutResult], *, skill_text: str = "", max_chars: int | None = 2000
) -> str:
    return "\n\n".join(
        f"### Item {i + 1}\n" + render_result(r, skill_text=skill_text, max_chars=max_chars)
        for i, r in enumerate(results)
    )


def render_results_within(
    results: Sequence[RolloutResult], *, skill_text: str, room_chars: int
) -> str:
    """The published analysts' view: every item whole, its whole trajectory included,
    unless the group would not fit `room_chars`; then each item longer than its even share
    is clipped to that share (short items stay whole)."""
    whole = [render_result(r, skill_text=skill_text, max_chars=None) for r in results]
    share = max(room_chars // max(1, len(results)), 200)
    if sum(len(w) + 16 for w in whole) > room_chars:
        whole = [
            w if len(w) <= share else render_result(r, skill_text=skill_text, max_chars=share)
            for w, r in zip(whole, results, strict=True)
        ]
    return "\n\n".join(f"### Item {i + 1}\n{w}" for i, w in enumerate(whole))


def render_pair(
    pair: EpochPair,
    *,
    previous_skill: str = "",
    current_skill: str = "",
    max_chars: int | None = None,
) -> str:
    """One paired item for the epoch prompts: the question and reference, then each
    skill's result (score, prediction, evaluator) and trajectory. As published, pairs that
    passed under both skills are shown without trajectories. `max_chars` None: whole;
    else the fields get an eighth each and the two trajectories share what is left."""
    before, after = pair.before, pair.after

    def cap(text: str, limit: int) -> str:
        return text if max_chars is None else clip(text, limit)

    field_cap = 0 if max_chars is None else max(max_chars // 8, 60)
    head = [
        f"### {pair.item_id} ({after.task_type}): {pair.outcome.replace('_', ' ')}",
        "question: " + cap(after.question, field_cap),
        reference_line(after, cap(after.reference, field_cap)),
    ]
    for label, result in (("previous skill", before), ("current skill", after)):
        head.append(
            f"{label}: hard {result.hard:g} | soft {result.soft:g} | prediction: "
            + cap(result.prediction, field_cap)
        )
        head.append(f"{label} evaluator: " + cap(result.explanation, field_cap))
        if result.error:
            head.append(f"{label} model error: " + clip(result.error, 200))
    text = "\n".join(head)
    if pair.outcome == "still_passing":
        return text
    trajectories = [
        (label, render_trajectory(r.trajectory, skill_text=skill, placeholder=pointer))
        for label, r, skill, pointer in (
            ("previous skill", before, previous_skill, PREVIOUS_SKILL_PLACEHOLDER),
            ("current skill", after, current_skill, SKILL_PLACEHOLDER),
        )
    ]
    room = None if max_chars is None else (max_chars - len(text)) // 2
    for label, trajectory in trajectories:
        if not trajectory:
            continue
        if room is None:
            text += f"\n{label} trajectory:\n{trajectory}"
        elif room > 80:
            text += f"\n{label} trajectory:\n{clip(trajectory, room)}"
    return text


def render_pairs(
    pairs: Sequence[EpochPair],
    *,
    previous_skill: str = "",
    current_skill: str = "",
    item_chars: int | None = None,
    room_chars: int | None = None,
    per_outcome: int | None = None,
    seed: int = 0,
) -> str:
    """The paired outcomes for the epoch prompts, by outcome, each title with its count.

    Published: every pair, whole (`per_outcome` None). With `room_chars`, as for the
    analysts' items, pairs stay whole unless they would not fit; then each pair longer
    than its even share is clipped to that share. `item_chars` clips every pair
    (the clipped_items overlay). `per_outcome` N (the sampled_pairs overlay) shows a
    seeded sample of N per outcome, and its title says it is a sample."""
    rng = random.Random(seed)
    chosen: list[tuple[str, list[EpochPair], int]] = []
    for outcome in PAIR_OUTCOMES:
        members = [p for p in pairs if p.outcome == outcome]
        shown = members
        if per_outcome is not None and len(members) > per_outcome:
            shown = rng.sample(members, per_outcome)
        chosen.append((outcome, shown, len(members)))

    def one(pair: EpochPair, limit: int | None) -> str:
        return render_pair(
            pair, previous_skill=previous_skill, current_skill=current_skill, max_chars=limit
        )

    every = [p for _, shown, _ in chosen for p in shown]
    rendered = {id(p): one(p, item_chars) for p in every}
    whole = sum(len(t) + 4 for t in rendered.values())
    if room_chars is not None and item_chars is None and whole > room_chars:
        share = max(room_chars // max(1, len(every)), 200)
        rendered = {
            id(p): t if len(t) <= share else one(p, share)
            for p, t in zip(every, rendered.values(), strict=True)
        }
    sections = []
    for outcome, shown, count in chosen:
        title = f"## {outcome.replace('_', ' ')} ({count} of {len(pairs)} items"
        if len(shown) < count:
            title += f"; a seeded sample of {len(shown)} is shown"
        title += ")"
        if not shown:
            sections.append(title + "\n(none)")
            continue
        sections.append(title + "\n" + "\n\n".join(rendered[id(p)] for p in shown))
    return "\n\n".join(sections)
