"""Edit lists as the optimizer's prompts show them, and the small list operations of the
merge tree (dedupe, the ranker's order). Kept apart from the strategy so the variants
(core.optimizer.autonomous_lr) render edits exactly as the merge and rank prompts do."""

from __future__ import annotations

import json

from core.optimizer.reflection_groups import clip
from core.optimizer.strategy import ProposalContext
from core.skill.edits import Edit

NONE = "(none)"


def edit_key(edit: Edit) -> tuple[str, str, str]:
    return (edit.op, edit.target, edit.content)


def dedupe(edits: list[Edit], seen: set[tuple[str, str, str]] | None = None) -> list[Edit]:
    """Drop repeats of (op, target, content), keeping the first; `seen` carries across lists."""
    seen = set() if seen is None else seen
    out = []
    for edit in edits:
        if edit_key(edit) not in seen:
            seen.add(edit_key(edit))
            out.append(edit)
    return out


def quote(text: str) -> str:
    """A JSON string literal: exactly what the optimizer must write back in its JSON."""
    return json.dumps(text, ensure_ascii=False)


def render_edits(
    edits: list[Edit],
    *,
    numbered: bool = False,
    max_chars: int | None = None,
    support: list[int] | None = None,
) -> str:
    """Edits for a prompt. Merge prompts must not clip (the model copies targets and
    contents back); the rank prompt may, since it answers with numbers, and shows each
    edit's `support` (how many analyst groups proposed it or what was merged into it)."""

    def cut(text: str) -> str:
        return text if max_chars is None else clip(text, max_chars)

    lines = []
    for i, edit in enumerate(edits):
        label = f"[{i}] " if numbered else "- "
        if support is not None:
            label += f"(support: {support[i]}) "
        lines.append(
            f"{label}op: {edit.op}\n  target: {quote(cut(edit.target))}\n"
            f"  content: {quote(cut(edit.content))}\n  rationale: {clip(edit.rationale, 300)}"
        )
    return "\n".join(lines) or NONE


def rank_order(order: list[int], n: int) -> list[int]:
    """Valid, first-seen indices from the ranker, then any it left out in merged order."""
    ranked = ranker_choice(order, n)
    return ranked + [i for i in range(n) if i not in ranked]


def ranker_choice(order: list[int], n: int) -> list[int]:
    """The valid indices the ranker named, each once, in its order."""
    chosen: list[int] = []
    for i in order:
        if 0 <= i < n and i not in chosen:
            chosen.append(i)
    return chosen


def ranked_selection(order: list[int], n: int, budget: int, ranking: str) -> list[int]:
    """The indices a step applies. selected (published): the ranker's own choice, cut at
    the budget, possibly fewer; when it named no valid index, the first `budget` in merged
    order. padded: the ranker's order filled up with what it left out, cut at the budget."""
    if ranking == "padded":
        return rank_order(order, n)[:budget]
    return ranker_choice(order, n)[:budget] or list(range(min(n, budget)))


# The rank prompt's answer rule for each `ranking`: the published ranker is asked for its
# selection, ours (padded) for a full order.
RANK_ANSWER = {
    "selected": (
        "listing the numbers of the {item}s to apply, at most {budget}, best first "
        "(leave out any {item} that would hurt or repeat another)"
    ),
    "padded": "listing every {item} number once, best first",
}


def rank_answer(ranking: str, budget: int, item: str = "edit") -> str:
    """The rank prompt's answer rule for `ranking`, of edits or (rewrite mode) suggestions."""
    return RANK_ANSWER[ranking].replace("{budget}", str(budget)).replace("{item}", item)


def render_unmatched(ctx: ProposalContext) -> str:
    report = ctx.last_apply_report
    if report is None or not report.unmatched():
        return NONE
    lines = []
    for outcome in report.unmatched():
        reason = f" ({outcome.reason})" if outcome.reason else ""
        lines.append(
            f"- {outcome.edit.op} with target {quote(clip(outcome.edit.target, 300))}: "
            f"{outcome.status.value}{reason}"
        )
    return "\n".join(lines)
