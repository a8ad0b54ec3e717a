"""A scripted optimizer for bench/method_variants.py: it answers every optimizer prompt
kind with valid JSON built only from what the prompt shows (failed items' questions and
reference answers, the edits or suggestions it is asked to merge), the way a competent
optimizer model would on the capitals task: a fact line per failed item ("- Peru: Lima")
and, while the skill has none, a format rule. Deterministic, so each variant's figures
are the loop's, not a model's mood. A bench tool, not a model; served over HTTP by
tests/support/loopback_openai.py."""

from __future__ import annotations

import json
import re

RULE = "Answer with only the city name."
_ITEM = re.compile(r"question: (.+?)\n.*?reference answer: (.+?)\n", re.DOTALL)
_COUNTRY = re.compile(r"^(?:what|which city) is the capital (?:city )?of (.+?)\?", re.IGNORECASE)


def _skill(prompt: str) -> str:
    if "<skill>\n" not in prompt:
        return ""
    return prompt.split("<skill>\n", 1)[1].split("\n</skill>", 1)[0]


def _facts(prompt: str, limit: int) -> list[str]:
    section = prompt.split("# Failed items", 1)[-1] if "# Failed items" in prompt else prompt
    if "FAILED" not in prompt:
        return []
    skill = _skill(prompt)
    lines: list[str] = []
    for question, answer in _ITEM.findall(section):
        country = _COUNTRY.search(question)
        if country:
            line = f"- {country.group(1).strip()}: {answer.strip()}"
            if line not in skill and line not in lines:
                lines.append(line)
    if RULE not in skill:
        lines.insert(0, RULE)
    return lines[:limit]


def _budget(prompt: str) -> int:
    found = re.search(r"at most (\d+)", prompt)
    return int(found.group(1)) if found else 4


def answer(prompt: str) -> str:  # noqa: PLR0911 - one branch per prompt kind
    if "Consolidate the execution notes" in prompt:
        notes = re.findall(r"^- (.+)$", prompt.split("# Execution notes", 1)[1], re.M)
        return json.dumps({"notes": notes[: max(1, len(notes) // 2)]})
    if "this step's learning rate" in prompt:
        pool = len(re.findall(r"^\[\d+\]", prompt, re.M))
        return json.dumps(
            {"count": min(pool, 3), "reasoning": "the top three", "confidence": "medium"}
        )
    if '"order"' in prompt:
        n = len(re.findall(r"^\[\d+\]", prompt, re.M))
        return json.dumps({"order": list(range(n)), "reason": "as merged"})
    if "epoch-level guidance" in prompt:
        return json.dumps(
            {"reasoning": "format errors", "content": "Give the capital's name and nothing else."}
        )
    if "notes for yourself" in prompt:
        return json.dumps(
            {"reasoning": "facts helped", "content": "Fact lines for failed countries helped."}
        )
    if "Rewrite the skill" in prompt:
        lines = re.findall(r"instruction: Add the line '(.+?)'", prompt)
        return json.dumps({"skill": _skill(prompt).rstrip("\n") + "\n" + "\n".join(lines) + "\n"})
    if "candidate versions of the skill" in prompt:
        return json.dumps({"pick": 0, "summary": "the failure-driven candidate"})
    if "Merge their suggestions" in prompt:
        found = re.findall(r"instruction: (Add the line '.+?')", prompt)
        unique = list(dict.fromkeys(found))[: _budget(prompt)]
        return json.dumps({"suggestions": [_suggestion(i) for i in unique]})
    if "Merge their proposals" in prompt:
        contents = list(dict.fromkeys(re.findall(r'content: "(.+?)"', prompt)))
        edits = [{"op": "append", "content": c, "rationale": "merged"} for c in contents]
        return json.dumps({"analysis": "union", "edits": edits[: _budget(prompt)]})
    lines = _facts(prompt, _budget(prompt))
    lapses = []
    if "Skill defects and execution lapses" in prompt and RULE in _skill(prompt):
        lapses = ["Answer with only the city name: some answers were sentences."]
    if "Propose typed suggestions" in prompt:
        return json.dumps(
            {
                "analysis": "missing facts",
                "suggestions": [_suggestion(f"Add the line '{x}'") for x in lines],
                "lapses": lapses,
            }
        )
    if "Write a complete new version" in prompt:
        skill = _skill(prompt).rstrip("\n") + "\n" + "\n".join(lines) + "\n"
        return json.dumps(
            {
                "analysis": "missing facts",
                "summary": f"{len(lines)} lines",
                "skill": skill,
                "lapses": lapses,
            }
        )
    edits = [{"op": "append", "content": x, "rationale": "failed item"} for x in lines]
    return json.dumps({"analysis": "missing facts", "edits": edits, "lapses": lapses})


def _suggestion(instruction: str) -> dict:
    return {
        "kind": "add",
        "title": instruction[:40],
        "motivation": "failed items",
        "instruction": instruction,
        "priority": "high",
    }
