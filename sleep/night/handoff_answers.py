"""Sleep's secret patterns mask handoff answers too: a person may paste a key into an
answer file, and the answer goes on into responses, events, rollouts and the judge's
prompt. Importing this module registers the mask (core/models/handoff.py applies it to
every answer it reads, before anything else sees the text)."""

from __future__ import annotations

from core.models.handoff import add_answer_mask
from sleep.redact import Redactor

_REDACTOR = Redactor()


def mask_secrets(text: str) -> str:
    return _REDACTOR.redact(text).text


add_answer_mask("sleep-redactor", mask_secrets)
