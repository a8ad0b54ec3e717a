"""train.gate.skip_when_perfect (Sleep's nights set it): once the skill scores 1 on every
val item, a strict gate can accept nothing, so the steps are skipped and nothing is asked
of the target or the optimizer for them (a strong-model handoff night answered 9 of its 13
prompts for steps that could not pass). Off (published), the steps run anyway."""

from __future__ import annotations

from core.config import config_from_dict
from core.models.factory import build_model_client
from core.models.scripted import last_user_text
from tests.core.training.test_method_fidelity import run
from tests.support.train_scenario import TEST, TRAIN, VAL, scenario_config

ANSWERS = {question: answer for _id, question, answer, _c in [*TRAIN, *VAL, *TEST]}
# Train questions no val or test item asks (Peru and Chile are asked there too).
TRAIN_ONLY = [q for _i, q, _a, _c in TRAIN if q not in {q for _i, q, _a, _c in [*VAL, *TEST]}]


def knows_every_capital(calls: list[str]):
    def answer(request) -> str:
        question = last_user_text(request)
        calls.append(question)
        return next((a for q, a in ANSWERS.items() if q in question), "I don't know.")

    return answer


async def test_a_perfect_baseline_skips_the_steps_it_cannot_win(tmp_path):
    results = {}
    for skip in (True, False):
        calls: list[str] = []
        tree = scenario_config(tmp_path / str(skip), gate={"skip_when_perfect": skip})
        config = config_from_dict(tree)
        client = build_model_client(config, scripted={"target": knows_every_capital(calls)},
                                    cache_path=tmp_path / f"{skip}.sqlite")  # fmt: skip
        summary, events = await run(tmp_path / str(skip), client=client, config=config)
        await client.aclose()
        results[skip] = (summary, events, calls)
    summary, events, calls = results[True]
    assert summary.baseline_val == 1.0 and summary.best_val == 1.0
    assert TRAIN_ONLY and not any(q in " ".join(calls) for q in TRAIN_ONLY)  # no train rollouts
    notices = [e.text for e in events if type(e).__name__ == "Notice"]
    assert any("no candidate can beat it" in n for n in notices)
    assert summary.accepted_steps == []
    published, _, published_calls = results[False]
    assert published.best_val == 1.0
    assert any(q in " ".join(published_calls) for q in TRAIN_ONLY)  # the steps ran
