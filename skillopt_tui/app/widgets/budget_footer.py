"""One line above the key footer: tokens and cost against their caps, progress, ETA."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from core.run.events import BudgetUpdated
from skillopt_tui.app.run_feed import format_eta
from skillopt_tui.run_words import steps_done as steps_done_text

BAR = 10


def _tokens(n: float) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(int(n))


def _bar(fraction: float) -> Text:
    filled = max(0, min(BAR, round(fraction * BAR)))
    style = "red" if fraction >= 0.9 else "yellow" if fraction >= 0.7 else "green"
    return Text.assemble(("█" * filled, style), ("░" * (BAR - filled), "dim"))


def top_stages(per_stage: dict[str, dict[str, float]], shown: int = 2) -> str:
    """The stages that spent most (cost, then tokens), e.g. 'rollout $0.120, analyst $0.040'."""

    def spent(row: dict[str, float]) -> tuple[float, float]:
        return row.get("cost_usd", 0.0), row.get("input_tokens", 0) + row.get("output_tokens", 0)

    ranked = sorted(per_stage.items(), key=lambda kv: spent(kv[1]), reverse=True)[:shown]
    return ", ".join(
        f"{name} ${row.get('cost_usd', 0.0):.3f}"
        if row.get("cost_usd")
        else f"{name} {_tokens(spent(row)[1])} tok"
        for name, row in ranked
    )


def budget_line(
    budget: BudgetUpdated | None,
    steps_done: int,
    total_steps: int,
    status: str,
    eta_s: float | None,
    activity: str = "",
) -> Text:
    """`activity` (what a live run is doing, run_words.activity) goes before the count."""
    parts: list[Text | str] = []
    if budget is None:
        parts.append(Text("budget: no calls yet", style="dim"))
    else:
        used = budget.input_tokens + budget.output_tokens
        cap = f"/{_tokens(budget.cap_tokens)}" if budget.cap_tokens else ""
        parts.append(f"tok {_tokens(used)}{cap}")
        cost_cap = f"/${budget.cap_cost_usd:.2f}" if budget.cap_cost_usd else ""
        fraction = max(
            used / budget.cap_tokens if budget.cap_tokens else 0.0,
            budget.cost_usd / budget.cap_cost_usd if budget.cap_cost_usd else 0.0,
        )
        if budget.cap_tokens or budget.cap_cost_usd:
            parts.append(" ")
            parts.append(_bar(fraction))
            parts.append(f" {fraction:.0%}")
        parts.append(f" · ${budget.cost_usd:.3f}{cost_cap}")
        if budget.per_stage:
            parts.append(f" · {top_stages(budget.per_stage)}")
    if status == "live" and activity:
        parts.append(f" · {activity}")
    parts.append(f" · {steps_done_text(steps_done, total_steps)}")
    if status == "live":
        parts.append(f" · ETA {format_eta(eta_s)}")
    return Text.assemble(*parts)


class BudgetFooter(Static):
    DEFAULT_CSS = "BudgetFooter { height: 1; padding: 0 1; }"

    def show(
        self,
        budget: BudgetUpdated | None,
        steps_done: int,
        total_steps: int,
        status: str,
        eta_s: float | None,
        activity: str = "",
    ) -> None:
        self.update(budget_line(budget, steps_done, total_steps, status, eta_s, activity))
