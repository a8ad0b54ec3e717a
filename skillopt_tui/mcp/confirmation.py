"""Confirmation codes for the tools that change the skills users' agents read (adopt,
rollback).

Why a code: MCP gives a server no channel to the person that the model cannot see, and the
agents we target run tools from print mode too, where no dialog can be shown. So the first
call of a changing tool only previews and returns a short code; the change happens when the
call is repeated with that code, which the tool's description tells the model to obtain from
the user. The code is an HMAC, under a key made fresh for each server process, of the exact
action: the tool, the repository, the target and hunks, and the current main commit. So it
cannot confirm a different change than the one previewed, it goes stale as soon as main
moves (a replay after the adoption fails), and no other session's code works here. It stops
a model acting on its own initiative in one step; it cannot stop a model that copies the
code without asking — the agent's own per-tool permission prompt is the second guard, which
is why the docs say never to pre-approve sleep_adopt or sleep_rollback.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

CODE_LENGTH = 6


class ConfirmationCodes:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or os.urandom(32)

    def code_for(self, action: dict[str, Any]) -> str:
        message = json.dumps(action, sort_keys=True, separators=(",", ":")).encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()
        return base64.b32encode(digest).decode()[:CODE_LENGTH]

    def matches(self, action: dict[str, Any], code: str) -> bool:
        given = code.strip().upper()
        return hmac.compare_digest(given, self.code_for(action))
