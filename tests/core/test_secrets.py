"""Secrets: .env parsing without exporting, and redaction of known values."""

from __future__ import annotations

import os

import pytest

from core.secrets import Secrets, SecretsError, redact, remember_secret


def test_env_file_values_are_found_but_not_exported(tmp_path):
    env = tmp_path / ".env"
    env.write_text('# keys\nexport SKO_A="sk-quoted-value"\nSKO_B=plain-value # note\n\n')
    secrets = Secrets(env, environ={})
    assert secrets.get("SKO_A") == "sk-quoted-value"
    assert secrets.get("SKO_B") == "plain-value"
    assert secrets.get("SKO_MISSING") is None
    assert "SKO_A" not in os.environ


def test_environment_wins_over_the_file(tmp_path):
    env = tmp_path / ".env"
    env.write_text("SKO_C=from-file\n")
    assert Secrets(env, environ={"SKO_C": "from-env"}).get("SKO_C") == "from-env"


def test_bad_env_file_never_echoes_the_line(tmp_path):
    env = tmp_path / ".env"
    env.write_text("sk-pasted-without-a-name-123\n")
    with pytest.raises(SecretsError) as info:
        Secrets(env)
    assert "sk-pasted" not in str(info.value) and ":1:" in str(info.value)
    with pytest.raises(SecretsError, match="does not exist"):
        Secrets(tmp_path / "missing.env")


def test_redact_masks_every_known_value():
    remember_secret("sk-very-secret-987")
    assert redact("key sk-very-secret-987 rejected") == "key *** rejected"
    assert redact("nothing here") == "nothing here"
