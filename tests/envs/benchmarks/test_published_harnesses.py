"""What the target sees under `skillopt train --config configs/<benchmark>/default.yaml`,
against a table of the published harness's facts (skillopt's own prompt and seed files,
which the 0.2.0 wheel does not ship; read from its public repository and restated here as
facts, not text). The first rollout's messages are captured from a real `skillopt train`
(in process) whose target is a scripted TEST DOUBLE recording them; `budget.max_calls 1`
ends the run after that call."""

from __future__ import annotations

import importlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from core.config import load_config
from core.environment.contract import analyst_guide
from core.models import local_server
from core.models.types import Request
from tests.envs.benchmarks.fixtures import SPLIT_IDS, write_manifest, write_split_dirs
from tests.envs.benchmarks.test_searchqa import item_row
from tests.support.cli_in_process import run_main
from tests.support.loopback_openai import LoopbackOpenAI

ROOT = Path(__file__).resolve().parents[3]
RECORDER = "tests.envs.benchmarks.test_published_harnesses"
SEEN: list[Request] = []  # of the module the scripted backend imports by RECORDER's name


def recorder():
    """`models.*.model: tests.envs.benchmarks.test_published_harnesses:recorder`."""

    def answer(request: Request) -> str:
        SEEN.append(request)
        return "<answer>x</answer>"

    return answer


# The published SearchQA harness (skillopt/envs/searchqa/prompts/rollout_system.md and
# skills/initial.md in the SkillOpt repository), as facts about the messages.
SEARCHQA_FACTS = {
    "a system prompt frames the skill": lambda system, user, seed: (
        not system.startswith("## Skill") and f"## Skill\n{seed.strip()}\n" in system
    ),
    "the role: an expert question answerer": lambda system, user, seed: (
        "expert" in system.split("## Skill")[0]
    ),
    "think step by step": lambda system, user, seed: "step by step" in system,
    "the answer inside <answer> tags": lambda system, user, seed: "<answer>...</answer>" in system,
    "keep the answer concise, a few words": lambda system, user, seed: "a few words" in system,
    "do not repeat the question": lambda system, user, seed: "restate the question" in system,
    "an answer-format example": lambda system, user, seed: bool(
        re.search(r"\n<answer>[^<\n]+</answer>\n?$", system)
    ),
    "the user turn: context, then question, under headings": lambda system, user, seed: bool(
        re.fullmatch(r"## Context\n.+\n\n## Question\n[^\n]+", user, re.S)
    ),
    "the seed is a placeholder: a heading and a note, no rules": lambda system, user, seed: (
        seed.startswith("# ") and len(seed) < 160 and not re.search(r"^\s*[-*\d]", seed, re.M)
    ),
}


def run_train(
    tmp_path: Path,
    benchmark: str,
    rows: dict,
    max_calls: int,
    backend: str = "scripted",
    env: dict[str, str] | None = None,
) -> list[Request]:
    """Every request of a `skillopt train` of the benchmark's default config, stopped by
    its call budget (target and optimizer calls both count), that reached the recorder:
    with `backend` "local" both roles' go to the embedded backend (at `env`'s address)."""
    manifest = write_manifest(tmp_path / "manifest")
    data = write_split_dirs(tmp_path / "data", rows)
    model = f"{RECORDER}:recorder"
    sets = {
        "env.data_dir": data,
        "env.manifest_dir": manifest,
        "run.runs_dir": tmp_path / "runs",
        "models.target.backend": backend,
        "models.optimizer.backend": backend,
        "models.optimizer.model": model,
        "budget.max_calls": max_calls,
    }
    if backend == "scripted":
        sets["models.target.model"] = sets["models.optimizer.model"] = model
    args = ["train", "--config", f"configs/{benchmark}/default.yaml"]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    seen = importlib.import_module(RECORDER).SEEN  # pytest imports this file apart
    seen.clear()
    environ = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    done = run_main(args, env=environ, cwd=ROOT, argv0="skillopt")
    assert seen or backend != "scripted", done.stdout + done.stderr
    return list(seen)


def first_target_turns(tmp_path: Path, benchmark: str, rows: dict) -> tuple[Any, Any]:
    """The system and user content of the first request a one-call train sent: under the
    published harness, exactly those two messages."""
    messages = run_train(tmp_path, benchmark, rows, max_calls=1)[0].messages
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[0]["content"], messages[1]["content"]


def test_searchqa_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill alone was the system prompt."""
    rows = {s: [item_row(i) for i in ids] for s, ids in SPLIT_IDS.items()}
    system, user = first_target_turns(tmp_path, "searchqa", rows)
    seed = (ROOT / "envs" / "searchqa" / "seed.md").read_text(encoding="utf-8")
    assert broken_facts(SEARCHQA_FACTS, system=system, user=user, seed=seed) == []


class EmbeddedLookalike(LoopbackOpenAI):
    """A real loopback server that answers `/props` as the embedded llama.cpp server would
    for `local` (weights, template, slots, context), so a run attaches to it through
    SKILLOPT_EMBEDDED_URL and every request body the embedded backend sends is recorded."""

    def __init__(self, local) -> None:
        super().__init__(handler=lambda record: "<answer>x</answer>")
        self.local = local

    def serve_other(self, http, record) -> None:
        if record.route != "/props":
            return super().serve_other(http, record)
        props = {
            "model_path": f"/weights/{local_server.WEIGHTS_FILE}",
            "chat_template": local_server.CHAT_TEMPLATE,
            "total_slots": self.local.parallel,
            "default_generation_settings": {"n_ctx": self.local.ctx_per_slot},
        }
        self._send_json(http, 200, props)


# What published 0.2.0's chat backends send the target besides the messages (its
# `qwen_chat` and OpenAI backends build the body from these and nothing else): the model,
# `max_tokens` (the environment's completion budget, SearchQA's 16,384, under the
# backend's cap) and a temperature only when one is configured. Never a stop sequence.
PUBLISHED_TARGET_PARAMETERS = {"model", "messages", "max_tokens", "temperature"}


def searchqa_on_the_embedded_model(tmp_path: Path, max_calls: int) -> list[dict]:
    """The request bodies a `skillopt train` of the SearchQA default config sends the
    embedded backend (both roles), stopped by its call budget."""
    rows = {s: [item_row(i) for i in ids] for s, ids in SPLIT_IDS.items()}
    local = load_config(ROOT / "configs" / "searchqa" / "default.yaml").models.local
    with EmbeddedLookalike(local) as server:
        env = {local_server.ATTACH_ENV: server.root_url}
        run_train(tmp_path, "searchqa", rows, max_calls=max_calls, backend="local", env=env)
    return [r.body for r in server.requests if r.route == server.endpoint_path]


def test_searchqa_on_the_embedded_model_sends_the_published_request_parameters(tmp_path):
    """Fails on the old code: the embedded backend added `stop: ["\\n"]` to every call, so
    the target's step-by-step reasoning the harness asks for ended at its first line (in
    bench/published_side_by_side.py's run: every reply 1 token, published's up to 512)."""
    sent = searchqa_on_the_embedded_model(tmp_path, max_calls=1)
    assert len(sent) == 1
    body = sent[0]
    assert set(body) - PUBLISHED_TARGET_PARAMETERS == set(), body
    assert "stop" not in body
    assert body["max_tokens"] == 16384
    # Greedy, as the side-by-side passes published: the embedded model's own default
    # (llama.cpp would sample at 0.8 when none is sent); any config may set another.
    assert body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_searchqa_on_the_embedded_model_sends_the_optimizer_no_schema_as_published(tmp_path):
    """Published's optimizer gets the same parameters as its target, no `response_format`:
    its replies are free text it parses. Fails on the old code, which sent the embedded
    model a bounded JSON schema (`structured: auto`), so our 135M analysts' replies parsed
    where published's ran to the cap: side by side, ours then merged and published did not."""
    sent = searchqa_on_the_embedded_model(tmp_path, max_calls=40)
    analysts = [b for b in sent if "the model FAILED" in b["messages"][0]["content"]]
    assert analysts, [b["messages"][0]["content"][:80] for b in sent]
    assert set(analysts[0]) - PUBLISHED_TARGET_PARAMETERS == set(), analysts[0].keys()


def broken_facts(facts: dict, **seen) -> list[str]:
    """The names of the facts that do not hold of what the target was sent."""
    return [fact for fact, holds in facts.items() if not holds(**seen)]


def seed_of(benchmark: str) -> str:
    """The seed skill the benchmark's default config starts from."""
    config = (ROOT / "configs" / benchmark / "default.yaml").read_text(encoding="utf-8")
    path = re.search(r"^\s*initial_skill:\s*(\S+)", config, re.M).group(1)
    return (ROOT / path).read_text(encoding="utf-8")


def frames_the_skill(system: str, seed: str) -> bool:
    """The published harnesses' `## Skill` section, inside a system prompt of their own."""
    return not system.startswith("## Skill") and f"## Skill\n{seed.strip()}\n" in system


def sections_and_rules(seed: str) -> tuple[int, int]:
    return len(re.findall(r"^## ", seed, re.M)), len(re.findall(r"^- ", seed, re.M))


# The published DocVQA harness (skillopt/envs/docvqa/prompts/rollout_system.md and
# skills/initial.md; rollout.py's user turn), as facts about the messages.
DOCVQA_FACTS = {
    "a system prompt frames the skill": lambda system, user, parts, seed: frames_the_skill(
        system, seed
    ),
    "the role: an expert reader of document images": lambda system, user, parts, seed: (
        "expert" in system.split("## Skill")[0] and "document" in system.split("## Skill")[0]
    ),
    "a short answer grounded in what is visible": lambda system, user, parts, seed: (
        "short" in system and "visibly" in system
    ),
    "exact spans, numbers, dates, names": lambda system, user, parts, seed: all(
        w in system for w in ("spans", "numbers", "dates", "names")
    ),
    "nothing invented": lambda system, user, parts, seed: "make up" in system,
    "of near matches, the best supported": lambda system, user, parts, seed: (
        "look close" in system and "supports best" in system
    ),
    "the answer inside <answer> tags": lambda system, user, parts, seed: system.rstrip().endswith(
        "inside <answer>...</answer>."
    ),
    "the user turn: the question, then the tag instruction, then the image": (
        lambda system, user, parts, seed: (
            bool(
                re.fullmatch(
                    r"[^\n]+\?\n\nGive the final answer inside <answer>\.\.\.</answer>\.", user
                )
            )
            and [p["type"] for p in parts] == ["text", "image_url"]
        )
    ),
    "the seed: visual evidence and exact answers, three rules each": (
        lambda system, user, parts, seed: (
            sections_and_rules(seed) == (2, 6)
            and "visual evidence" in seed
            and "exact answer" in seed
        )
    ),
}


def test_docvqa_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill alone was the system prompt, our own seed."""
    from tests.envs.benchmarks.test_docvqa import PNG

    (tmp_path / "data" / "images").mkdir(parents=True)
    (tmp_path / "data" / "images" / "p.png").write_bytes(PNG)
    rows = {
        s: [
            {"id": i, "question": f"What is the date on page {i}?", "answers": ["3/3/98"]}
            | {"image_path": "images/p.png"}
            for i in ids
        ]
        for s, ids in SPLIT_IDS.items()
    }
    system, parts = first_target_turns(tmp_path, "docvqa", rows)
    seen = {"system": system, "user": parts[0]["text"], "parts": parts, "seed": seed_of("docvqa")}
    assert broken_facts(DOCVQA_FACTS, **seen) == []


# The published LiveMathematicianBench harness (skillopt/envs/livemathematicianbench/
# prompts/rollout_system.md, skills/initial.md; rollout.py's user turn), as facts.
LIVEMATH_FACTS = {
    "a system prompt frames the skill": lambda system, user, seed: frames_the_skill(system, seed),
    "the role: an expert mathematical reasoner on multiple choice": lambda system, user, seed: (
        "expert" in system.split("## Skill")[0] and "multiple-choice" in system
    ),
    "mind quantifiers, hypotheses, extremal wording, equality": lambda system, user, seed: all(
        w in system for w in ("quantifiers", "hypotheses", "extremal", "equality")
    ),
    "think step by step": lambda system, user, seed: "step by step" in system,
    "only the choice label inside <answer> tags": lambda system, user, seed: (
        "<answer>...</answer>" in system and "only the label" in system
    ),
    "an answer-format example": lambda system, user, seed: bool(
        re.search(r"\n<answer>[A-J]</answer>\n?$", system)
    ),
    "the user turn: the question, then the labelled choices, under headings": (
        lambda system, user, seed: bool(
            re.fullmatch(r"## Question\n[^\n]+\n\n## Choices\n(?:[A-J]\. [^\n]+\n?)+", user)
        )
    ),
    "the seed: options, precision, hypotheses, the final answer": lambda system, user, seed: (
        sections_and_rules(seed) == (4, 7) and "label" in seed.split("## ")[-1]
    ),
}


def test_livemath_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill alone was the system prompt, our own seed."""
    choices = [{"label": "A", "text": "n^2"}, {"label": "B", "text": "n log n"}]
    rows = {
        s: [
            {"id": i, "question": f"Which bound holds in {i}?", "choices": choices}
            | {"correct_choice": choices[1]}
            for i in ids
        ]
        for s, ids in SPLIT_IDS.items()
    }
    system, user = first_target_turns(tmp_path, "livemath", rows)
    assert broken_facts(LIVEMATH_FACTS, system=system, user=user, seed=seed_of("livemath")) == []


# The published OfficeQA harness (skillopt/envs/officeqa/prompts/rollout_system.md,
# skills/initial.md; rollout.py's user turn in its default offline mode), as facts.
OFFICEQA_FACTS = {
    "a system prompt frames the skill": lambda system, user, seed: frames_the_skill(system, seed),
    "the role: an expert on Treasury Bulletin files": lambda system, user, seed: (
        "expert" in system.split("## Skill")[0] and "Treasury Bulletin" in system
    ),
    "six numbered rules after the skill": lambda system, user, seed: (
        re.findall(r"^(\d)\. ", system.partition("## Rules")[2].split("## ")[0], re.M)
        == list("123456")
    ),
    "only the document tools; narrow first; short searches, small reads": (
        lambda system, user, seed: all(
            w in system
            for w in ("only through the document tools", "most relevant file", "targeted")
        )
    ),
    "no values the text lacks; operands before arithmetic": lambda system, user, seed: (
        "Never give a value" in system and "exact operands" in system
    ),
    "call tools without asking": lambda system, user, seed: "do not ask for permission" in system,
    "the answer in tags, and no tool after it": lambda system, user, seed: system.rstrip().endswith(
        "inside <answer>...</answer> and call no further tool."
    ),
    "the user turn: question, candidate files, source hints, under headings": (
        lambda system, user, seed: bool(
            re.fullmatch(
                r"## Question\n[^\n]+\n\n## Candidate Files\n(- [^\n]+\n?)+"
                r"\n## Source Hints\n(- [^\n]+\n?)+",
                user,
            )
        )
    ),
    "the seed: finding the source, the evidence, the answer": lambda system, user, seed: (
        sections_and_rules(seed) == (3, 8)
    ),
}


def test_officeqa_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill alone was the system prompt, our own seed."""
    (tmp_path / "data" / "docs").mkdir(parents=True)
    (tmp_path / "data" / "docs" / "bulletin.txt").write_text("Total public debt: 170,659")
    rows = {
        s: [
            {"id": i, "question": "What was the total public debt?", "answers": ["170,659"]}
            | {"source_files": ["bulletin.txt"], "source_docs": ["https://example.org/b"]}
            for i in ids
        ]
        for s, ids in SPLIT_IDS.items()
    }
    system, user = first_target_turns(tmp_path, "officeqa", rows)
    assert broken_facts(OFFICEQA_FACTS, system=system, user=user, seed=seed_of("officeqa")) == []


# The published SpreadsheetBench harness in its configured multi mode (skillopt/envs/
# spreadsheetbench/prompts/codegen_system.md, skills/initial.md; codegen_agent.py's user
# turn and workbook preview), as facts.
SPREADSHEET_FACTS = {
    "the codegen system prompt, then the skill under ## Skill": lambda system, user, seed: (
        system.endswith(f"\n\n## Skill\n{seed.strip()}") and not system.startswith("## Skill")
    ),
    "the role: an expert Python programmer on spreadsheets": lambda system, user, seed: (
        system.startswith("You are an expert Python programmer") and "spreadsheets" in system
    ),
    "one self-contained script from INPUT_PATH to OUTPUT_PATH": lambda system, user, seed: (
        "self-contained" in system and "INPUT_PATH" in system and "OUTPUT_PATH" in system
    ),
    "standard library, openpyxl and pandas only": lambda system, user, seed: (
        "standard library, openpyxl and pandas" in system
    ),
    "no printing, no input(), no file paths in the code": lambda system, user, seed: all(
        w in system for w in ("Print nothing", "input()", "no file paths")
    ),
    "only the code, in one python block": lambda system, user, seed: (
        "ONLY the Python code" in system and "```python" in system
    ),
    "the user turn: instruction, type, position, preview, task": lambda system, user, seed: bool(
        re.fullmatch(
            r"# Instruction\n[^\n]+\n\nInstruction type: [^\n]+\n"
            r"Expected answer position: [^\n]+\n\n# Input spreadsheet preview\n.+\n\n"
            r"# Task\n[^\n]+",
            user,
            re.S,
        )
    ),
    "the task: other cells kept, every real row, only a python block": (
        lambda system, user, seed: all(
            w in user.split("# Task")[-1]
            for w in (
                "INPUT_PATH",
                "OUTPUT_PATH",
                "other cell",
                "hardcode row counts",
                "```python```",
            )
        )
    ),
    "the preview: sheet dimensions, cells as A1=value | B1=value": lambda system, user, seed: bool(
        re.search(r"^## Sheet: Data  \(dim=A1:C3, max_row=3, max_col=3\)\nA1=a \| B1=b", user, re.M)
    ),
    "the seed: workflow, libraries, a solution.py template, output rules": (
        lambda system, user, seed: (
            "```python" in seed
            and all(w in seed for w in ("solution.py", "INPUT_PATH", "openpyxl", "pandas.to_excel"))
        )
    ),
}


def test_spreadsheetbench_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill alone was the system prompt, our own seed."""
    from tests.envs.benchmarks.fixtures import workbook

    (tmp_path / "data" / "books").mkdir(parents=True)
    workbook(tmp_path / "data" / "books" / "in.xlsx", with_sums=False)
    workbook(tmp_path / "data" / "books" / "out.xlsx", with_sums=True)
    case = {"input": "books/in.xlsx", "answer": "books/out.xlsx"}
    rows = {
        s: [
            {"id": i, "instruction": "Fill column C with A + B.", "cases": [case]}
            | {"instruction_type": "Cell-Level Manipulation", "answer_position": "Data!C2:C3"}
            for i in ids
        ]
        for s, ids in SPLIT_IDS.items()
    }
    system, user = first_target_turns(tmp_path, "spreadsheetbench", rows)
    seed = seed_of("spreadsheetbench")
    assert broken_facts(SPREADSHEET_FACTS, system=system, user=user, seed=seed) == []


# The published ALFWorld harness (skillopt/envs/alfworld/rollout.py's system line and skill
# block, prompts/rollout_no_history.md and rollout_with_history.md, history length 2,
# skills/initial.md), as facts about the first two steps' messages.
ALFWORLD_FACTS = {
    "a one-line system prompt: an expert agent in ALFRED": lambda first, later, seed: (
        "\n" not in first[0] and "expert agent" in first[0] and "ALFRED" in first[0]
    ),
    "the skill in the user turn, under ## Skill Knowledge": lambda first, later, seed: (
        first[1].startswith("## Skill Knowledge\n") and seed.strip() in first[1]
    ),
    "step 1: the observation and the admissible actions, quoted in brackets": (
        lambda first, later, seed: (
            "Your task is to: put a pen in drawer 1." in first[1]
            and "['go to desk 1'\n 'go to drawer 1'\n 'look'\n 'inventory']" in first[1]
        )
    ),
    "reasoning inside <think> tags (MUST), the action inside <action> tags": (
        lambda first, later, seed: all(
            w in first[1] for w in ("MUST", "<think> </think>", "<action> </action>")
        )
    ),
    "later steps: the task, the steps taken, the last observations with their actions": (
        lambda first, later, seed: (
            "Your task: put a pen in drawer 1." in later[1]
            and "taken 1 step(s)" in later[1]
            and "[Observation 1: '-= Welcome" in later[1]
        )
    ),
    "a reply without an <action> tag is taken as look": lambda first, later, seed: (
        "Action 1: 'look']" in later[1]
    ),
    "the seed: six task kinds, eight principles, mistakes to avoid": (
        lambda first, later, seed: (
            len(re.findall(r"^\| [A-Z][a-z]+( [A-Za-z]+)* & Place", seed, re.M)) == 5
            and re.findall(r"^(\d)\. \*\*", seed, re.M) == list("12345678")
            and "<think>" in seed
            and "<action>" in seed
        )
    ),
}


def test_alfworld_default_config_sends_the_published_harness(tmp_path):
    """Fails on the old code: the skill was the system prompt and the step prompt our own."""
    from tests.envs.benchmarks.test_alfworld import EPISODE

    (tmp_path / "data" / "games").mkdir(parents=True)
    (tmp_path / "data" / "games" / "pen.json").write_text(json.dumps(EPISODE))
    row = {"gamefile": "games/pen.json", "task_type": "pick_and_place_simple"}
    rows = {s: [{"id": i, **row} for i in ids] for s, ids in SPLIT_IDS.items()}
    requests = run_train(tmp_path, "alfworld", rows, max_calls=2)
    first, later = ([m["content"] for m in r.messages] for r in requests[:2])
    assert broken_facts(ALFWORLD_FACTS, first=first, later=later, seed=seed_of("alfworld")) == []


# The published SearchQA failure analyst's categories, and ours for each.
SEARCHQA_FAILURE_KINDS = {
    "rule_missing": "missing rule",
    "rule_wrong": "misleading rule",
    "rule_ignored": "rule not followed",
    "answer_format": "answer form",
    "other": "other",
}


def test_searchqa_failure_analysts_get_the_benchmarks_taxonomy(tmp_path):
    """Through the environment contract (envs/searchqa/prompts/analyst_failure.md). Fails
    on the old code (no taxonomy)."""
    rows = {s: [item_row(i) for i in ids] for s, ids in SPLIT_IDS.items()}
    requests = run_train(tmp_path, "searchqa", rows, max_calls=6)
    analysts = [r for r in requests if "the model FAILED" in r.messages[0]["content"]]
    assert analysts, [r.messages[0]["content"][:80] for r in requests]
    prompt = analysts[0].messages[0]["content"]
    section = prompt.split("# What failures look like in this task\n")[1].split("# Current")[0]
    assert all(f"- {ours}:" in section for ours in SEARCHQA_FAILURE_KINDS.values())


# Each benchmark's published failure categories (skillopt/envs/<name>/prompts/
# analyst_error.md) and ours for each, in envs/<name>/prompts/analyst_failure.md.
FAILURE_KINDS = {
    "searchqa": SEARCHQA_FAILURE_KINDS,
    "alfworld": {
        "navigation_loop": "going in circles",
        "missed_object": "object passed by",
        "wrong_sequence": "steps out of order",
        "premature_stop": "stopped short",
        "action_loop": "repeated action",
        "appliance_error": "appliance misuse",
        "rule_missing": "missing rule",
        "rule_wrong": "misleading rule",
        "rule_ignored": "rule not followed",
        "other": "other",
    },
    "docvqa": {
        "evidence_miss": "evidence overlooked",
        "near_match_confusion": "neighbouring span",
        "normalization_error": "form only",
        "reading_error": "misread",
        "other": "other",
    },
    "livemath": {
        "quantifier_miss": "quantifier missed",
        "strength_mismatch": "wrong strength",
        "condition_miss": "condition missed",
        "option_confusion": "choices confused",
        "other": "other",
    },
    "officeqa": {
        "retrieval_miss": "wrong source",
        "evidence_miss": "evidence missed",
        "operand_error": "wrong values",
        "calculation_error": "calculation",
        "answer_format": "answer form",
        "other": "other",
    },
    "spreadsheetbench": {
        "rule_missing": "missing rule",
        "rule_wrong": "misleading rule",
        "rule_ignored": "rule not followed",
        "data_exploration": "too little data read",
        "code_error": "code bug",
        "other": "other",
    },
}


@pytest.mark.parametrize("benchmark", sorted(FAILURE_KINDS))
def test_every_benchmark_names_its_published_failure_kinds(benchmark):
    """Through the contract (core.environment.contract.analyst_guide); an environment
    without a guide (capitals, ours) gives none."""
    module = importlib.import_module(f"envs.{benchmark}.environment")
    cls = next(
        c
        for c in vars(module).values()
        if isinstance(c, type) and getattr(c, "name", None) == benchmark
    )
    guide = analyst_guide(cls.__new__(cls), "failure")
    listed = re.findall(r"^- ([^:]+):", guide, re.M)
    assert listed == list(FAILURE_KINDS[benchmark].values())


def test_an_environment_without_a_guide_gives_none():
    from envs.capitals.environment import CapitalsEnvironment

    assert analyst_guide(CapitalsEnvironment.__new__(CapitalsEnvironment), "failure") == ""
