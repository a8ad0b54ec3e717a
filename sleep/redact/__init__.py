"""Secrets out of transcript text, locally, before anything is shown, stored or sent."""

from sleep.redact.redactor import Finding, Redacted, Redactor

__all__ = ["Finding", "Redacted", "Redactor"]
