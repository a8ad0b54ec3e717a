"""TEST DOUBLE: a world where the truth about every edit is known, to measure selection.

The gate and the frontier decide which candidate skills survive; whether they decide well
depends on noise no real benchmark lets us see. Here it is all known:

* Items `i000`, `i001`, ... (train, val and test drawn from one pool, so the splits are
  exchangeable). Each item has a base outcome (passes or fails under the empty skill),
  fixed by the world's seed.
* Rules `r00`, `r01`, ..., each a line `- rule rNN: <text>` in the skill. A rule has a
  kind and a set of items it touches: a `helpful` rule makes its items pass, a `harmful`
  rule makes them fail (harm wins over help), a `neutral` rule touches nothing.
* Noise: every rollout's outcome is flipped with probability `noise`, drawn from
  sha256(world seed, skill text, item, n) where n counts the times this (skill, item)
  pair was asked: the same question asked again is a fresh sample (gate.repeats), and a
  rerun of the same sequence of calls gives the same answers.

`RuleWorldEnv` is the environment (its rollout asks the target, whose reply is "pass" or
"fail"); `RuleWorldTarget` the scripted target responder; `ScriptedProposer` an optimizer
strategy that appends one rule per candidate from a known mix of kinds. The bench
(bench/selection_sim.py) and the selection tests drive the real training loop with them.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from core.environment.contract import RolloutResult, Score, TaskItem
from core.models.types import Request
from core.optimizer.strategy import EpochContext, Proposal, ProposalContext
from core.skill.edits import Edit

RULE_LINE = re.compile(r"^\s*-\s*rule (r\d+):", re.MULTILINE)
KINDS = ("helpful", "neutral", "harmful")


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str  # helpful | neutral | harmful
    items: frozenset[str]

    @property
    def line(self) -> str:
        return f"- rule {self.name}: {self.kind} rule touching {len(self.items)} items"


@dataclass
class RuleWorld:
    """The world's truth. `mix` gives how many rules of each kind there are; each touching
    rule picks `touches` items of the whole pool (so it acts on train, val and test)."""

    seed: int = 0
    train: int = 20
    val: int = 30
    test: int = 60
    base_pass: float = 0.5
    noise: float = 0.1
    mix: dict[str, int] = field(default_factory=lambda: {"helpful": 4, "neutral": 8, "harmful": 4})
    touches: int = 30
    rules: dict[str, Rule] = field(init=False)
    base: dict[str, bool] = field(init=False)

    def __post_init__(self) -> None:
        unknown = set(self.mix) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown rule kinds {sorted(unknown)}; use {', '.join(KINDS)}")
        rng = random.Random(f"rule-world:{self.seed}")
        ids = self.item_ids("train") + self.item_ids("val") + self.item_ids("test")
        self.base = {i: rng.random() < self.base_pass for i in ids}
        kinds = [k for k in KINDS for _ in range(self.mix.get(k, 0))]
        rng.shuffle(kinds)
        self.rules = {}
        for n, kind in enumerate(kinds):
            touched = frozenset() if kind == "neutral" else frozenset(rng.sample(ids, self.touches))
            self.rules[f"r{n:02d}"] = Rule(f"r{n:02d}", kind, touched)

    def item_ids(self, split: str) -> list[str]:
        offset = {"train": 0, "val": self.train, "test": self.train + self.val}[split]
        size = {"train": self.train, "val": self.val, "test": self.test}[split]
        return [f"i{offset + k:03d}" for k in range(size)]

    def held(self, skill: str) -> list[Rule]:
        return [self.rules[name] for name in RULE_LINE.findall(skill) if name in self.rules]

    def passes(self, skill: str, item: str) -> bool:
        """The noise-free outcome of `item` under `skill`."""
        rules = self.held(skill)
        if any(r.kind == "harmful" and item in r.items for r in rules):
            return False
        if any(r.kind == "helpful" and item in r.items for r in rules):
            return True
        return self.base[item]

    def true_score(self, skill: str, split: str = "all") -> float:
        """The expected score on `split` ("all": the whole pool), noise included."""
        splits = ("train", "val", "test") if split == "all" else (split,)
        ids = [i for s in splits for i in self.item_ids(s)]
        right = sum(self.passes(skill, i) for i in ids)
        return (right * (1 - self.noise) + (len(ids) - right) * self.noise) / len(ids)


class RuleWorldEnv:
    """TEST DOUBLE environment over a RuleWorld: an item's question is its id."""

    name = "rule-world"
    version = "1"

    def __init__(self, world: RuleWorld) -> None:
        self.world = world

    def load_split(self, split: str) -> list[TaskItem]:
        return [TaskItem(i, "rule-world", i, "pass") for i in self.world.item_ids(split)]

    async def rollout(self, item: TaskItem, skill_text: str, complete) -> RolloutResult:
        messages = [
            {"role": "system", "content": skill_text},
            {"role": "user", "content": item.question},
        ]
        completion = await complete(messages)
        prediction = completion.text.strip()
        reply = {"role": "assistant", "content": prediction}
        return RolloutResult.scored(
            item, prediction, self.score(item, prediction), [*messages, reply]
        )

    def score(self, item: TaskItem, prediction: str) -> Score:
        hard = 1.0 if prediction == "pass" else 0.0
        return Score(hard, hard, f"item {item.id}: {prediction} (reference: pass)")


class RuleWorldTarget:
    """TEST DOUBLE target responder: "pass" or "fail" by the world's rules, with noise."""

    def __init__(self, world: RuleWorld) -> None:
        self.world = world
        self.asked: Counter[tuple[str, str]] = Counter()
        self.calls = 0

    def __call__(self, request: Request) -> str:
        skill = next((m["content"] for m in request.messages if m["role"] == "system"), "")
        item = request.messages[-1]["content"]
        n = self.asked[(skill, item)]
        self.asked[(skill, item)] += 1
        self.calls += 1
        outcome = self.world.passes(skill, item)
        digest = hashlib.sha256(f"{self.world.seed}\0{skill}\0{item}\0{n}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 < self.world.noise:
            outcome = not outcome
        return "pass" if outcome else "fail"


class ScriptedProposer:
    """TEST DOUBLE optimizer strategy: each candidate appends one rule the skill lacks,
    drawn (seeded by the step) from the world's rules. `candidate_index` in the context
    (screened candidates_per_step) draws a different one. `merge_skills` combines two
    skills by holding the rules of both, as an optimizer asked to merge would."""

    name = "scripted-proposer"

    def __init__(self, world: RuleWorld) -> None:
        self.world = world
        self.proposed: list[str] = []

    def pick(self, skill: str, seed: int, index: int = 0) -> Rule | None:
        held = {r.name for r in self.world.held(skill)}
        free = [r for name, r in sorted(self.world.rules.items()) if name not in held]
        if not free:
            return None
        return random.Random(f"proposer:{self.world.seed}:{seed}:{index}").choice(free)

    async def propose(self, ctx: ProposalContext) -> Proposal:
        rule = self.pick(ctx.skill_text, ctx.seed, getattr(ctx, "candidate_index", 0))
        if rule is None:
            return Proposal(edits=[])
        self.proposed.append(rule.name)
        edit = Edit(op="append", content=rule.line, rationale=f"scripted {rule.kind} rule")
        return Proposal(edits=[edit], merged=[edit])

    async def merge_skills(self, first: str, second: str) -> str:
        missing = [r.line for r in self.world.held(second) if r not in self.world.held(first)]
        return first.rstrip("\n") + "".join("\n" + line for line in missing) + "\n"

    async def slow_update(self, ctx: EpochContext) -> str | None:
        return None

    async def meta_notes(self, ctx: EpochContext) -> str:
        return ""
