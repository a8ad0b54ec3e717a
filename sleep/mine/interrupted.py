"""Requests the person interrupted: harvested (the transcript holds them) but never
trained on. A stopped turn says the person changed their mind or saw it go wrong, so its
prompt is no evidence of what they wanted; the miners skip it (sleep/mine/heuristic.py,
sleep/mine/with_model.py) and the night lists it as left out with this reason, beside the
sessions routing left out, so nothing disappears silently. One the person followed with
a correction ("never mind the long version, just tell me …") is not left out: the
correction says what they wanted of it, so it is a task with that as its rubric
(sleep/mine/follow_up.py `redirected`).
"""

from __future__ import annotations

from typing import Any

from sleep.mine.follow_up import redirected
from sleep.mine.tasks import MinedTask

INTERRUPTED_REASON = "interrupted by the user"
_SHOWN_CHARS = 80


def interrupted_left_out(sessions: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One left-out entry per interrupted prompt: {session, source, reason, prompt} (the
    prompt's redacted text, cut short)."""
    out = []
    for session in sessions:
        source = str(session.get("source") or "?")
        prompts = session.get("tasks", [])
        for index, prompt in enumerate(prompts):
            if prompt.get("interrupted") and not redirected(prompts, index):
                text = str(prompt.get("text") or "")
                out.append(
                    {
                        "session": f"{source}:{session.get('session_id', '?')}",
                        "source": source,
                        "reason": INTERRUPTED_REASON,
                        "prompt": _shown(text),
                    }
                )
    return out


def describe_interrupted(left_out: list[dict[str, str]]) -> list[str]:
    """The console line for them (none when there are none)."""
    n = sum(1 for e in left_out if e.get("reason") == INTERRUPTED_REASON)
    if not n:
        return []
    return [f"{n} request(s) left out: {INTERRUPTED_REASON} (not trained on)"]


def _shown(text: str) -> str:
    return " ".join(text.split())[:_SHOWN_CHARS]


def still_left_out(left_out: list[dict[str, str]], tasks: list[MinedTask]) -> list[dict[str, str]]:
    """The entries whose request no mined task asks: the miner model makes a task of an
    interrupted request it reads what followed as redirecting (the heuristic's shapes miss
    "ugh too long. whats the command"), and a task is no request left out."""
    asked = {(s, _shown(t.intent)) for t in tasks for s in t.source_sessions}
    return [e for e in left_out if (e.get("session"), e.get("prompt")) not in asked]
