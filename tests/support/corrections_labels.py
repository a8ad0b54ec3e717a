"""The corrections corpus's ground truth (labels.json), written from the script
(tests/support/corrections_script.py) plus what only the run knows: each session's
transcript and id, and the commits before and after it.

    sessions     key, agent, batch, transcript (relative to the corpus), session id,
                 base_commit (HEAD when it began), commit_after (the person's commit of its
                 work, or null)
    requests     id, session, text, kind (how it should be mined), interrupted,
                 base_commit / committed_after (a replay must start at base_commit)
    corrections  id, preference, corrects (a request id), form (after | up_front |
                 after_interrupt | with_request), text (the correction, or its words
                 inside a prompt that also asks for something), mechanical, check_kinds / check_value (the check that fits,
                 or ["judge"])
    preferences  id -> what the person wants
    prompts      every other typed prompt, with its role (acknowledgement, fragment)
    planted_secrets  what must never reach Sleep's state or output
"""

from __future__ import annotations

from typing import Any


def session_id(transcript: str) -> str:
    """Claude's file is `<id>.jsonl`; Codex's `rollout-<time>-<id>.jsonl` (a UUID)."""
    stem = transcript.rsplit("/", 1)[-1].removesuffix(".jsonl")
    return stem[-36:]


def labels_of(
    script,
    transcripts: dict[str, str],
    commits: dict[str, tuple[str, str | None]],
    home: str,
    made_at: float,
) -> dict[str, Any]:
    sessions, requests, corrections, prompts = [], [], [], []
    for s in script.SESSIONS:
        base, after = commits[s.key]
        sessions.append({"key": s.key, "agent": s.agent, "batch": s.batch,
                         "transcript": transcripts[s.key],
                         "session_id": session_id(transcripts[s.key]),
                         "base_commit": base, "commit_after": after})  # fmt: skip
        edits_committed = after is not None
        for turn in s.turns:
            if turn.role == "request":
                requests.append({"id": turn.request, "session": s.key, "agent": s.agent,
                                 "batch": s.batch, "text": turn.prompt, "kind": turn.kind,
                                 "interrupted": turn.interrupt,
                                 "changes_files": any(type(a).__name__ in ("Edit", "Write")
                                                      for a in turn.actions),
                                 "base_commit": base,
                                 "committed_after": after if edits_committed else None})  # fmt: skip
            elif turn.role in ("acknowledgement", "fragment"):
                prompts.append({"text": turn.prompt, "role": turn.role, "session": s.key})
            for c in turn.corrections:
                corrections.append({
                    "id": f"k{len(corrections) + 1:02d}", "preference": c.preference,
                    "corrects": c.corrects, "form": c.form,
                    "text": c.phrase or turn.prompt,
                    "mechanical": c.fit.mechanical, "check_kinds": list(c.fit.kinds),
                    "check_value": c.fit.value, "session": s.key, "agent": s.agent,
                    "batch": s.batch,
                })  # fmt: skip
    return {
        "version": 1,
        "made_at": int(made_at),
        "fixture_home": home,
        "project": f"{home}/{script.PROJECT}",
        "preferences": script.PREFERENCES,
        "sessions": sessions,
        "requests": requests,
        "corrections": corrections,
        "prompts": prompts,
        "planted_secrets": [script.PLANTED_SECRET],
    }
