"""The shared parts of every agent backend that need no binary: where each CLI keeps its
login (the user's folder, and the same folder in a call's private home that the CLI's
variable points at), the login lent there, and one failure mapping read in each CLI's
own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.models.agents.claude_code import ClaudeCodeBackend
from core.models.agents.cli import AgentSettings
from core.models.agents.codex import CodexBackend
from core.models.agents.copilot import CopilotBackend
from core.models.agents.opencode import OpenCodeBackend
from core.models.agents.pi import PiBackend
from core.models.types import AuthError, TransientError, UsageLimitReached

BACKENDS = (ClaudeCodeBackend, CodexBackend, PiBackend, OpenCodeBackend, CopilotBackend)


def backend(cls, environ: dict[str, str], **settings):
    return cls(AgentSettings(binary=Path("/bin/true"), model="", environ=environ, **settings))


@pytest.mark.parametrize("cls", BACKENDS, ids=lambda c: c.name)
def test_the_private_folder_is_where_the_cli_looks_given_its_variable(cls, tmp_path):
    """The variable set for the call names the private folder exactly as the user's
    variable names the user's folder."""
    home = tmp_path / "home"
    env: dict[str, str] = {}
    folder = cls.config_folder.make_private(home, env)
    assert folder.is_dir() and folder == cls.config_folder.private(home)
    assert folder.is_relative_to(home)
    assert cls.config_folder.user(env) == folder  # read back through the CLI's variable


def test_opencode_keeps_its_login_below_xdg_data_home(tmp_path):
    assert OpenCodeBackend.config_folder.user({"XDG_DATA_HOME": "/x"}) == Path("/x/opencode")
    assert OpenCodeBackend.config_folder.user({"HOME": "/h"}) == Path("/h/.local/share/opencode")
    assert CodexBackend.user_login({"HOME": "/h"}) == Path("/h/.codex/auth.json")
    assert ClaudeCodeBackend.user_login({"CLAUDE_CONFIG_DIR": "/c"}) == Path("/c/.credentials.json")
    assert CopilotBackend.user_login({"HOME": "/h"}) is None  # a token, never a lent file


@pytest.mark.parametrize("cls", [ClaudeCodeBackend, CodexBackend, PiBackend, OpenCodeBackend],
                         ids=lambda c: c.name)  # fmt: skip
def test_a_login_is_lent_where_the_call_reads_it_and_only_there(cls, tmp_path):
    user_home = tmp_path / "user"
    source = cls.user_login({"HOME": str(user_home)})
    source.parent.mkdir(parents=True)
    source.write_text('{"token": "t"}')
    call_home = tmp_path / "call"
    env: dict[str, str] = {}
    cls.config_folder.make_private(call_home, env)
    assert backend(cls, {"HOME": str(user_home)}).key_or_login(call_home) is None
    lent = cls.user_login(env)  # where the CLI, given the call's variables, reads its login
    assert lent.read_text() == '{"token": "t"}' and lent.stat().st_mode & 0o777 == 0o600
    assert [p for p in user_home.rglob("*") if p.is_file()] == [source]  # theirs untouched


@pytest.mark.parametrize("cls", [ClaudeCodeBackend, CodexBackend, PiBackend, OpenCodeBackend],
                         ids=lambda c: c.name)  # fmt: skip
def test_no_key_and_no_login_says_how_to_log_in(cls, tmp_path):
    with pytest.raises(AuthError) as err:
        backend(cls, {"HOME": str(tmp_path)}).key_or_login(tmp_path / "call")
    message = str(err.value)
    assert "\n" not in message and cls.login.how in message and "api_key_env" in message


def test_a_custom_server_gets_a_placeholder_and_no_login(tmp_path):
    custom = backend(CodexBackend, {"HOME": str(tmp_path)}, base_url="http://127.0.0.1:9")
    assert custom.key_or_login(tmp_path / "call") == "not-needed"
    assert not (tmp_path / "call").exists()


def test_each_cli_is_read_in_its_own_words():
    claude = backend(ClaudeCodeBackend, {})
    codex = backend(CodexBackend, {})
    limit = claude.failed("something odd", None, limit_reported=True)
    assert isinstance(limit, UsageLimitReached) and "resumable" in str(limit)
    refused = claude.failed("Not logged in · Please run /login", None)
    assert isinstance(refused, AuthError) and "log in with `claude` and /login" in str(refused)
    assert isinstance(codex.failed("You are not logged in", None), AuthError)
    # Codex has no "quota" among its limit words: a 429 about quota is retried.
    assert isinstance(codex.failed("429 Too Many Requests: quota", None), TransientError)
    assert isinstance(backend(PiBackend, {}).failed("over quota", None), UsageLimitReached)
