"""How many tokens (and seconds) one optimizer call may take.

A fixed `max_tokens` fails reasoning models twice: their hidden reasoning is counted in
the completion budget, and it grows with what they read. So each call's budget is sized
from its prompt and the skill it may quote back (edit targets and contents copy skill
text): never below the role's configured `max_tokens` (the floor), never above the
configured ceiling. A call allowed more tokens is allowed more time, at a conservative
generation rate, so a long answer is not cut by the role's timeout (a streamed call, as
every optimizer call is at `stream: auto`, takes it as its idle timeout between chunks:
core/models/streaming.py). Characters per token is the usual ~4 for English prose; the
estimate only needs to be generous, not exact.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4
BASE_REPLY_TOKENS = 1024  # an analysis paragraph and a few edits
TOKENS_PER_SECOND = 40  # a slow server's generation rate, for the timeout


def completion_budget(prompt_chars: int, skill_chars: int, *, floor: int, ceiling: int) -> int:
    """Tokens for one reply: room for the answer, for reasoning over the prompt (a quarter
    of its tokens) and for quoting the whole skill once."""
    prompt_tokens = math.ceil(prompt_chars / CHARS_PER_TOKEN)
    skill_tokens = math.ceil(skill_chars / CHARS_PER_TOKEN)
    wanted = BASE_REPLY_TOKENS + prompt_tokens // 4 + skill_tokens
    return max(floor, min(ceiling, wanted))


def call_timeout(max_tokens: int, *, floor_s: float) -> float:
    """Seconds for a reply of up to `max_tokens`: the role's timeout, or longer."""
    return max(floor_s, max_tokens / TOKENS_PER_SECOND)
