"""TEST DOUBLE for Sleep nights: one deterministic brain for every role, so a night's
decisions can be asserted exactly. It is not a model.

- target: answers a package-manager question with "pnpm" only when the skill (system
  message) says to use pnpm, else with "npm"; any other request gets a generic reply that
  quotes the first word of the skill's last line (so a skill change is visible);
- judge: reads the reply and the rubric out of the judge prompt: 1.0 when the rubric's
  "use X" word is in the reply, 0.2 when it is not, 0.6 when the rubric names nothing;
- optimizer: every analyst proposes appending "Use pnpm for every install; never npm."
  (with a rationale naming the first preference id the prompt shows, as
  sleep/prompts/analyst_guide.md asks: a night stages only edits naming a preference whose
  held-out occurrences moved); merge and rank keep the first edit.
Load it by import path: `models.<role>: {backend: scripted, model: "tests.sleep.night_double:brain"}`.
"""

from __future__ import annotations

import json
import re

from core.models.scripted import last_user_text

RULE = "Use pnpm for every install; never npm."


def _target(messages) -> str:
    skill = next((m["content"] for m in messages if m["role"] == "system"), "")
    question = messages[-1]["content"]
    if re.search(r"\binstall\b|\bdependenc", question, re.IGNORECASE):
        return "Run `pnpm install`." if "pnpm" in skill else "Run `npm install`."
    last = skill.strip().splitlines()[-1].split()[0] if skill.strip() else "nothing"
    return f"Here is how, following {last}."


def _judge(prompt: str) -> str:
    reply = prompt.split("## Reply", 1)[1].split("Answer with one JSON", 1)[0]
    rubric = prompt.split("## Rubric", 1)[1].split("## Reply", 1)[0]
    wanted = re.search(r"\buse\s+(\w+)", rubric, re.IGNORECASE)
    if wanted is None:
        return json.dumps({"score": 0.6, "reason": "no rubric to check"})
    ok = re.search(rf"\b{re.escape(wanted.group(1))}\b", reply, re.IGNORECASE)
    return json.dumps(
        {"score": 1.0 if ok else 0.2, "reason": f"{'uses' if ok else 'lacks'} {wanted.group(1)}"}
    )


def _optimizer(prompt: str) -> str:
    if "Rank candidate edits" in prompt:
        return json.dumps({"order": [1]})
    named = re.search(r"\b(p-[0-9a-f]{10})\b", prompt)
    why = "the user corrected npm to pnpm"
    edit = {"op": "append", "content": RULE, "rationale": f"{named[1]}: {why}" if named else why}
    return json.dumps({"analysis": "installs used npm; the user wants pnpm", "edits": [edit]})


def _miner(prompt: str) -> str:
    """Each numbered prompt is a task, except a "no, ..." correction, which becomes the
    rubric of the task before it (in words of its own, so a test can tell this miner's
    tasks from the heuristic miner's)."""
    lines = re.findall(r"^(\d+)\. \[[^\]]*\] (.*)$", prompt, re.MULTILINE)
    tasks: list[dict] = []
    for number, text in lines:
        if text.lower().startswith("no,") and tasks:
            tasks[-1]["rubric"] = f"Mined rubric: {text}"
            tasks[-1]["sources"].append(int(number))
        else:
            tasks.append({"intent": text, "rubric": "", "checks": [], "sources": [int(number)]})
    return json.dumps({"tasks": tasks})


class Brain:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {"target": 0, "judge": 0, "optimizer": 0, "miner": 0}

    def __call__(self, request) -> str:
        text = last_user_text(request)
        if "You turn the requests a developer typed" in text:
            self.calls["miner"] += 1
            return _miner(text)
        if "You are grading one reply" in text:
            self.calls["judge"] += 1
            return _judge(text)
        if '"edits"' in text or "Rank candidate edits" in text:
            self.calls["optimizer"] += 1
            return _optimizer(text)
        self.calls["target"] += 1
        return _target(request.messages)


def brain() -> Brain:
    return Brain()


INSTALL_PROMPT = "how do I install the dependencies of the {part} package?"
_WORDS = [
    "web",
    "api",
    "docs",
    "cli",
    "worker",
    "admin",
    "mobile",
    "billing",
    "search",
    "auth",
    "infra",
    "ui",
    "mail",
    "jobs",
    "feed",
    "chat",
    "media",
    "maps",
    "pay",
    "crm",
]
# 60 names: the chance that fewer than two of them split into val is about 1e-8.
NAMES = [f"{w}{suffix}" for suffix in ("", "-core", "-kit") for w in _WORDS]


def parts_for(project, n: int = 12, *, val_fraction: float = 0.3, val: int = 2) -> list[str]:
    """n package names whose install tasks fall at least twice into train and `val` times
    into val, so a night on them always has something to learn and something to gate on."""
    from sleep.mine.split import split_key, split_of

    def split(part: str) -> str:
        key = split_key(INSTALL_PROMPT.format(part=part))
        return split_of(key, val_fraction=val_fraction, test_fraction=0.0)

    held_out = [p for p in NAMES if split(p) == "val"][:val]
    train = [p for p in NAMES if split(p) == "train"][:2]
    rest = [p for p in NAMES if p not in held_out + train]
    assert len(held_out) == val and len(train) == 2, "pick more NAMES"
    return (held_out + train + rest)[:n]
