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

A preview opens a pending confirmation; the right code closes it (so a code works once),
and after MAX_WRONG wrong codes it is void: guessing cannot outlast it, and only a new
preview, which the user sees, opens another with a fresh code.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any, Literal

CODE_LENGTH = 6
MAX_WRONG = 5
Verdict = Literal["confirmed", "wrong", "void"]


def _message(action: dict[str, Any]) -> bytes:
    return json.dumps(action, sort_keys=True, separators=(",", ":")).encode()


class ConfirmationCodes:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or os.urandom(32)
        self._pending: dict[bytes, int] = {}  # action digest -> wrong codes so far
        self._issued: dict[bytes, int] = {}  # action digest -> previews opened (the code's nonce)

    def _digest(self, action: dict[str, Any]) -> bytes:
        return hashlib.sha256(_message(action)).digest()

    def _code(self, digest: bytes) -> str:
        nonce = self._issued.get(digest, 0).to_bytes(8, "big")
        mac = hmac.new(self._key, digest + nonce, hashlib.sha256).digest()
        return base64.b32encode(mac).decode()[:CODE_LENGTH]

    def code_for(self, action: dict[str, Any]) -> str:
        """The code for a preview of `action`: the pending one, or a fresh one once the last
        was used or voided."""
        digest = self._digest(action)
        if digest not in self._pending:
            self._issued[digest] = self._issued.get(digest, 0) + 1
            self._pending[digest] = 0
        return self._code(digest)

    def check(self, action: dict[str, Any], code: str) -> Verdict:
        """ "confirmed" closes the pending confirmation; "wrong" counts a miss; "void" is a
        miss with no confirmation pending (none previewed, used, or voided by this miss)."""
        digest = self._digest(action)
        if digest not in self._pending:
            return "void"
        given = code.strip().upper().encode("utf-8")  # compare_digest takes non-ASCII as bytes
        if hmac.compare_digest(given, self._code(digest).encode()):
            del self._pending[digest]
            return "confirmed"
        self._pending[digest] += 1
        if self._pending[digest] >= MAX_WRONG:
            del self._pending[digest]
            return "void"
        return "wrong"
