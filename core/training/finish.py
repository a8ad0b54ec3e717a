"""The end of a run (DESIGN §4): promote the final skill if it beats the best, evaluate
initial / best / final on the test split, write summary.json.

Everything here goes through the rollout runner, so the best skill's val buckets (scored
in full when it was accepted) and a rerun of a finished-but-killed finish cost nothing.
"""

from __future__ import annotations

from core.run.events import FinalSkillChecked, RunFinished
from core.run.staging import StagedCandidate
from core.run.summary import EvalResult, RunSummary
from core.skill.document import skill_hash
from core.skill.validation import validate_candidate
from core.training.candidate_gate import density_margin, mean
from core.training.context import TrainingRun
from core.training.gate import compare_items


def summary_of(
    tr: TrainingRun,
    *,
    status: str,
    reason: str = "",
    final_val: float | None = None,
    val: EvalResult | None = None,
    test: dict | None = None,
    final_check: dict | None = None,
) -> RunSummary:
    s = tr.state
    snap = tr.client.ledger.snapshot()
    return RunSummary(
        run_id=s.run_id,
        status=status,
        env=tr.env.name,
        strategy=tr.strategy.name,
        metric=tr.cfg.gate.metric,
        baseline_val=s.baseline_score,
        best_val=s.best_score,
        final_val=final_val,
        best_version=s.best_version,
        steps_done=s.next_step,
        total_steps=s.total_steps,
        accepted_steps=[r["step"] for r in s.staged_refs if r.get("source", "step") == "step"],
        accepted_slow_updates=[v.step for v in s.versions if v.source == "slow_update"],
        staged=[dict(r) for r in s.staged_refs],
        final_check=dict(final_check or {}),
        val=val.to_dict() if val else {},
        test=test or {},
        rollouts_saved=s.rollouts_saved,
        truncated_rollouts=tr.runner.cache.truncated_counts(),
        usage=snap.to_dict(),
        cost_usd=snap.cost_usd,
        wall_time_s=round(s.wall_time_s, 3),
        reason=reason,
    )


def _slow_updates_not_in_best(tr: TrainingRun) -> list[int]:
    """The slow updates made after the best version (versions only grow along the running
    skill, so these are the ones the best skill lacks and the final skill holds)."""
    s = tr.state
    return [v.step for v in s.versions if v.source == "slow_update" and v.version > s.best_version]


async def finish(tr: TrainingRun) -> RunSummary:
    s = tr.state
    final_text = tr.current
    final_val = s.best_score
    check: dict = {}
    if skill_hash(final_text) != skill_hash(tr.best):
        final_val = None
        slow = _slow_updates_not_in_best(tr)
        best_before = s.best_score or 0.0
        problems = validate_candidate(
            final_text, max_chars=tr.cfg.max_skill_chars, original=tr.best
        )
        if problems:
            check = {"outcome": "invalid", "reason": "invalid final skill: " + "; ".join(problems)}
        else:
            # The same gate as every candidate (ties, float noise, repeats and the density
            # term included), scored in full: the final skill is rolled out on every item.
            before = s.best_score or 0.0
            margin, _ = density_margin(tr, final_text)
            gated = await tr.runner.score_with_gate(
                tr.val_items,
                final_text,
                best=before,
                gate_cfg=tr.cfg.gate.model_copy(update={"early_decide": False}),
                phase="final_val",
                step=s.total_steps,
                margin=margin,
                skill_role="final",
            )
            metrics = gated.item_metrics
            final_val = mean([metrics[i.id] for i in tr.val_items])
            if gated.decision.accepted:
                improved, regressed = compare_items(s.best_items, metrics)
                s.best_version = s.current_version
                s.best_score = final_val
                s.best_items = metrics
                tr.rd.write_best_skill(final_text)
                # Staged before the finished state is persisted: a finish killed after this
                # line is redone from the last step's state and stages the same ("final",
                # total_steps) candidate again, which the stagers dedupe.
                ref = tr.stager.stage(
                    StagedCandidate(
                        run_id=s.run_id,
                        step=s.total_steps,
                        skill_text=final_text,
                        val_before=before,
                        val_after=final_val,
                        items_improved=improved,
                        items_regressed=regressed,
                        val_items=len(tr.val_items),
                        source="final",
                        summary=f"final skill: val {before:.3f} -> {final_val:.3f}",
                    )
                )
                s.staged_refs.append({"step": s.total_steps, "source": "final", "ref": ref})
                check = {"outcome": "kept", "reason": gated.decision.reason}
            else:
                check = {"outcome": "rejected", "reason": gated.decision.reason}
        check.update(final_val=final_val, best_val=best_before, slow_updates=slow)
        tr.emit(FinalSkillChecked(step=s.total_steps, **check))
    best_text = tr.best
    val_results = await tr.runner.run(
        tr.val_items,
        best_text,
        split="val",
        phase="final_val",
        step=s.total_steps,
        skill_role="best",
    )
    val = EvalResult.from_results("val", val_results, skill_hash(best_text))
    test: dict = {}
    if tr.cfg.final_test and tr.test_items:
        for label, text in (
            ("initial", tr.skill_text(0)),
            ("best", best_text),
            ("final", final_text),
        ):
            results = await tr.runner.run(
                tr.test_items,
                text,
                split="test",
                phase="test",
                step=s.total_steps,
                skill_role=label,
            )
            test[label] = EvalResult.from_results("test", results, skill_hash(text)).to_dict()
    s.finished = True
    s.status = "finished"
    tr.persist()
    summary = summary_of(
        tr, status="finished", final_val=final_val, val=val, test=test, final_check=check
    )
    tr.rd.write_summary(summary.to_dict())
    tr.budget_event()
    tr.emit(
        RunFinished(
            status="finished",
            baseline_val=s.baseline_score or 0.0,
            best_val=s.best_score or 0.0,
            final_val=final_val,
            test={k: v["hard"] for k, v in test.items()},
        )
    )
    return summary
