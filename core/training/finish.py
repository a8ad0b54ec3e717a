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
from core.training.candidate_gate import density_margin, env_gate_rule, mean, moved_items, ruled
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


async def evaluations(
    tr: TrainingRun, best_text: str, final_text: str
) -> tuple[list, dict[str, tuple[str, list]]]:
    """The best skill's val results and the test results of initial / best / final.

    They are independent of each other: with early work they run side by side (the
    initial skill's test is usually done already: Training.start_spare_work), a skill's
    second evaluation after its first (the same text is then read from the rollout cache,
    as it is when they run in turn). Results are taken in the old order, so the first
    failure in that order is the one raised."""
    step = tr.state.total_steps

    def scoring(items, text: str, split: str, phase: str, role: str):
        def run():
            return tr.runner.run(items, text, split=split, phase=phase, step=step, skill_role=role)

        # The tests can wait (a provider batch when run.batch uses one); the final val
        # decides between best and final skill and stays interactive.
        return (lambda: tr.batched("test", run)) if split == "test" else run

    planned = [("val", "best", best_text)]
    if tr.cfg.final_test and tr.test_items:
        planned += [
            ("test", "initial", tr.skill_text(0)),
            ("test", "best", best_text),
            ("test", "final", final_text),
        ]
    jobs, last_of_text, done = [], {}, {}
    for split, label, text in planned:
        job = tr.jobs.get(f"test:{label}") if split == "test" and tr.early else None
        if job is None or job.failed or job.task.cancelled():  # none early, or redone here
            items, phase = (
                (tr.val_items, "final_val") if split == "val" else (tr.test_items, "test")
            )
            previous = last_of_text.get((split, text))
            job = tr.jobs.submit(
                f"finish:{split}:{label}",
                scoring(items, text, split, phase, label),
                after=[previous] if previous is not None else [],
            )
        last_of_text[(split, text)] = job
        jobs.append((split, label, text, job))
        if not tr.early:  # every phase in turn
            done[(split, label)] = await job.result()
    val_results: list = []
    tests: dict[str, tuple[str, list]] = {}
    for split, label, text, job in jobs:
        results = done.get((split, label)) or await job.result()
        if split == "val":
            val_results = results
        else:
            tests[label] = (text, results)
    return val_results, tests


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
            final_text, max_chars=tr.cfg.max_skill_chars, original=tr.best, full=tr.cfg.prevalidate
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
            decision = ruled(env_gate_rule(tr), gated.decision, s.best_items, metrics)
            if decision.accepted:
                improved, regressed = compare_items(s.best_items, metrics)
                moved = moved_items(tr.val_items, s.best_items, gated)
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
                        moved=moved,
                        source="final",
                        summary=f"final skill: val {before:.3f} -> {final_val:.3f}",
                    )
                )
                s.staged_refs.append({"step": s.total_steps, "source": "final", "ref": ref})
                check = {"outcome": "kept", "reason": decision.reason}
            else:
                check = {"outcome": "rejected", "reason": decision.reason}
        check.update(final_val=final_val, best_val=best_before, slow_updates=slow)
        tr.emit(FinalSkillChecked(step=s.total_steps, **check))
    best_text = tr.best
    val_results, tests = await evaluations(tr, best_text, final_text)
    val = EvalResult.from_results("val", val_results, skill_hash(best_text))
    test = {
        label: EvalResult.from_results("test", results, skill_hash(text)).to_dict()
        for label, (text, results) in tests.items()
    }
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
