"""Make the corrections corpus of issue 37 with the real CLIs (run by hand; the output is
committed under tests/sleep/fixtures/corrections/):

    .venv/bin/python -m tests.support.corrections_corpus --out tests/sleep/fixtures/corrections
    .venv/bin/python -m tests.support.corrections_corpus --script tests.support.photos_script \
        --out tests/sleep/fixtures/corrections_photos

--script names the module that says what happens (corrections_script: the billing project
the mining was developed on; photos_script: a second project, unseen by it until its
figures were taken, then fixed against; recipes_script: a third, held out for a round,
then fixed against; greenhouse_script: a fourth, held out from fixing; ledger_script: a
fifth, held out from all mining work).

The real pinned `claude` and `codex` binaries (.tools/agents, shared AGENT-CLIS.md) run
interactively under tmux, each in a private HOME, so their transcripts land in their own
stores (~/.claude/projects, ~/.codex/sessions) as a person's sessions (`entrypoint: cli`,
`originator: codex-tui`). The model behind them is scripted (tests/support/
corrections_script.py) on a loopback server (tests/support/loopback_agent_models.py): it
really edits files of a real git project through the agent's own tools (Claude's Read,
Edit, Bash and sub-agent; Codex's exec_command and apply_patch) and runs `make test`. The
person types the script's prompts, presses Escape on one long answer, and commits a
session's work after it.

Two batches a night apart: batch 1's transcripts and commits are dated one day before
batch 2's. A commit is dated when the person makes it, after the session whose work it
holds (so a replay that starts at the last commit before its session starts before it) (the transcripts' ISO dates and epoch seconds are moved back one day when they
are copied out; nothing else in them is changed but the private home, which becomes
/home/dev, also where a folder name encodes it). Written to --out: claude/, codex/ (the
stores), project.bundle (the project's history), labels.json (the ground truth,
tests/support/corrections_labels.py).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from core.models.agents.process import AGENTS_BIN
from tests.support.corrections_labels import labels_of
from tests.support.corrections_script import (
    Delegate,
    Edit,
    Read,
    Run,
    Session,
    Turn,
    Write,
)
from tests.support.loopback_agent_models import (
    AgentRequest,
    Answer,
    LoopbackAgentModels,
    Say,
    UseTool,
)
from tests.support.tmux import Tmux

FIXTURE_HOME = "/home/dev"
PYTHON = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"
GIT_PERSON = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
              "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}  # fmt: skip


# ---------------------------------------------------------------------------- the model


def _patch(edit: Edit | Write) -> str:
    """Codex's apply_patch text for one file change."""
    if isinstance(edit, Write):
        body = "".join(f"+{line}\n" for line in edit.content.splitlines())
        return f"*** Begin Patch\n*** Add File: {edit.path}\n{body}*** End Patch\n"
    hunks = ""
    for old, new in edit.pairs:
        hunks += "@@\n" + "".join(f"-{line}\n" for line in old.splitlines())
        hunks += "".join(f"+{line}\n" for line in new.splitlines())
    return f"*** Begin Patch\n*** Update File: {edit.path}\n{hunks}*** End Patch\n"


def claude_calls(action, project: Path, tools: list[str]) -> list[UseTool]:
    """One action as Claude Code's tool calls (one per model reply)."""
    at = str(project / getattr(action, "path", ""))
    if isinstance(action, Read):
        return [UseTool("Read", {"file_path": at})]
    if isinstance(action, Write):
        return [UseTool("Write", {"file_path": at, "content": action.content})]
    if isinstance(action, Edit):
        return [UseTool("Edit", {"file_path": at, "old_string": old, "new_string": new})
                for old, new in action.pairs]  # fmt: skip
    if isinstance(action, Run):
        return [UseTool("Bash", {"command": action.command, "description": "Run it"})]
    assert isinstance(action, Delegate)
    name = "Agent" if "Agent" in tools else "Task"
    return [UseTool(name, {"description": action.description, "prompt": action.prompt,
                           "subagent_type": "general-purpose"})]  # fmt: skip


def codex_calls(action) -> list[UseTool]:
    if isinstance(action, Read):
        return [UseTool("exec_command", {"cmd": f"cat {action.path}"})]
    if isinstance(action, Run):
        return [UseTool("exec_command", {"cmd": action.command})]
    assert isinstance(action, (Edit, Write))
    return [UseTool("exec_command", {"cmd": f"apply_patch <<'PATCH'\n{_patch(action)}PATCH"})]


def _typed(text: str) -> bool:
    return bool(text.strip()) and not text.lstrip().startswith("<")


def tool_results_since_prompt(request: AgentRequest) -> int:
    """How many tool results the current turn has had (after the person's last prompt)."""
    count = 0
    if request.protocol == "anthropic":
        for message in reversed(request.body.get("messages") or []):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            blocks = (
                [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            )
            results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
            count += len(results)
            texts = [
                b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            ]
            if not results and any(_typed(t) for t in texts):
                break
        return count
    for item in reversed(request.body.get("input") or []):
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            count += 1
        elif item.get("role") == "user":
            content = item.get("content") or []
            texts = [p.get("text", "") for p in content if isinstance(p, dict)]
            if any(_typed(t) for t in texts):
                break
    return count


class ScriptedModel:
    """The brain behind both CLIs: a typed prompt's turn is found by its text, and the
    number of tool results since it says which of the turn's calls comes next."""

    def __init__(self, project: Path, sessions: list[Session], title: str) -> None:
        self.project = project
        self.title = title
        self.turns: dict[str, Turn] = {}
        self.started: dict[str, threading.Event] = {}
        self.finished: dict[str, threading.Event] = {}
        for session in sessions:
            for turn in [*session.turns, *session.sub_agent]:
                self.turns[turn.prompt] = turn
                self.started[turn.prompt] = threading.Event()
                self.finished[turn.prompt] = threading.Event()

    def __call__(self, request: AgentRequest) -> Answer:
        if not request.tool_names:  # a title or topic call
            return Answer([Say(self.title)])
        turn = self.turns.get(request.last_user_text.strip())
        if turn is None:
            return Answer([Say("ok")])
        self.started[turn.prompt].set()
        if turn.interrupt:
            return Answer([Say(turn.answer)], stall=60.0)
        if request.protocol == "anthropic":
            calls = [
                c for a in turn.actions for c in claude_calls(a, self.project, request.tool_names)
            ]
        else:
            calls = [c for a in turn.actions for c in codex_calls(a)]
        done = tool_results_since_prompt(request)
        if done < len(calls):
            return Answer([calls[done]])
        self.finished[turn.prompt].set()
        return Answer([Say(turn.answer)])


# ---------------------------------------------------------------------------- the person


class Terminal:
    """One interactive CLI under tmux on a private socket."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.tmux = Tmux(f"corpus{os.getpid()}{name}")
        exports = " ".join(f"{k}={_sh(v)}" for k, v in env.items())
        self.tmux.start(f"cd {_sh(str(cwd))} && env -i {exports} {' '.join(map(_sh, argv))}",
                        160, 48)  # fmt: skip

    def wait_for(self, pattern: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.tmux.screen()
            if re.search(pattern, screen):
                return screen
            time.sleep(0.5)
        raise TimeoutError(f"no {pattern!r} on screen:\n{self.tmux.screen()}")

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", "tui", *(["-l"] if literal else []), *keys)
        time.sleep(0.4)

    def close(self) -> None:
        self.tmux.kill()


def _sh(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"


def type_turn(term: Terminal, model: ScriptedModel, turn: Turn, busy: str) -> None:
    """Types one prompt and waits until the turn is over (the model gave its last answer
    and the CLI is idle again); an `interrupt` turn is stopped with Escape instead."""
    model.started[turn.prompt].clear()  # "ok" and "thanks" come back in several sessions
    model.finished[turn.prompt].clear()
    term.keys(turn.prompt, literal=True)
    time.sleep(0.8)  # Enter right after a burst of keys can be swallowed
    for _ in range(3):
        term.keys("Enter")
        if model.started[turn.prompt].wait(15):
            break
    else:
        raise TimeoutError(f"the CLI never sent {turn.prompt!r}:\n{term.tmux.screen()}")
    if turn.interrupt:
        with contextlib.suppress(TimeoutError):  # the answer has begun on screen
            term.wait_for(re.escape(turn.answer[:20]), 20)
        time.sleep(1)
        term.keys("Escape")
        time.sleep(2)
        term.keys(*["BSpace"] * (len(turn.prompt) + 4))  # it puts the prompt back: clear it
        return
    if not model.finished[turn.prompt].wait(120):
        raise TimeoutError(f"the turn {turn.prompt!r} never finished:\n{term.tmux.screen()}")
    deadline = time.monotonic() + 60
    time.sleep(1.5)
    while re.search(busy, term.tmux.screen()) and time.monotonic() < deadline:
        time.sleep(0.5)
    time.sleep(1.0)


def run_claude(home: Path, project: Path, server: LoopbackAgentModels, session: Session,
               model: ScriptedModel) -> None:  # fmt: skip
    env = {**_base_env(home), "ANTHROPIC_BASE_URL": server.root_url,
           "ANTHROPIC_API_KEY": "sk-ant-loopback-dummy",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}  # fmt: skip
    argv = [
        str(AGENTS_BIN / "claude"),
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash Read Edit Write Agent Task",
    ]
    term = Terminal(session.key, argv, env, project)
    try:
        screen = term.wait_for(r"(API key|for shortcuts|❯)", 60)
        if "API key" in screen:
            term.keys("Up")
            term.keys("Enter")
        term.wait_for(r"(for shortcuts|❯)", 60)
        time.sleep(1.5)
        for turn in session.turns:
            type_turn(term, model, turn, r"esc to interrupt")
        term.keys("/exit", literal=True)
        time.sleep(0.8)
        term.keys("Enter")
        deadline = time.monotonic() + 20
        while term.tmux.alive() and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        term.close()


def run_codex(home: Path, project: Path, server: LoopbackAgentModels, session: Session,
              model: ScriptedModel) -> None:  # fmt: skip
    env = {**_base_env(home), "CODEX_HOME": str(home / ".codex"), "LOCAL_KEY": "loopback-dummy"}
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(
        'model = "local-model"\nmodel_provider = "lp"\napproval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n[model_providers.lp]\nname = "lp"\n'
        f'base_url = "{server.root_url}/v1"\nenv_key = "LOCAL_KEY"\nwire_api = "responses"\n'
        f'[projects."{project}"]\ntrust_level = "trusted"\n'
    )
    # --no-daemon: the TUI's background app server would outlive the session.
    term = Terminal(session.key, [str(AGENTS_BIN / "codex"), "--no-daemon"], env, project)
    try:
        term.wait_for(r"for shortcuts", 60)
        term.wait_for(r"local-model", 60)
        time.sleep(2)
        for turn in session.turns:
            type_turn(term, model, turn, r"Working|esc to interrupt")
        for _ in range(2):  # the first Ctrl-C may already end it
            term.tmux("send-keys", "-t", "tui", "C-c", check=False)
            time.sleep(1)
    finally:
        term.close()


def _base_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": f"{home / '.local' / 'bin'}:{os.environ['PATH']}",
            "TERM": "xterm-256color", "LANG": "C.UTF-8"}  # fmt: skip


# ---------------------------------------------------------------------------- the project


def git(project: Path, *args: str, when: dt.datetime | None = None) -> str:
    env = {**os.environ, **GIT_PERSON}
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    done = subprocess.run(["git", *args], cwd=project, env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    return done.stdout.strip()


def make_project(home: Path, script, when: dt.datetime) -> Path:
    project = home / script.PROJECT
    for rel, text in script.PROJECT_FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", script.FIRST_COMMIT, when=when)
    # `make test` calls `python`: the person's own, with pytest.
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {PYTHON} "$@"\n')
    (bin_dir / "python").chmod(0o755)
    # Codex runs commands in a login shell, whose /etc/profile resets PATH: the person's
    # ~/.profile puts ~/.local/bin back, as Debian's default one does (without it every
    # `make test` in a Codex session failed with "make: python: No such file or directory").
    (home / ".profile").write_text('PATH="$HOME/.local/bin:$PATH"\nexport PATH\n')
    # The person's git identity, so an agent that commits on its own (the recipes corpus's
    # does, and is corrected for it) can.
    (home / ".gitconfig").write_text("[user]\n\tname = Dev\n\temail = dev@example.com\n")
    config = {"hasCompletedOnboarding": True,
              "projects": {str(project): {"hasTrustDialogAccepted": True}}}  # fmt: skip
    (home / ".claude.json").write_text(json.dumps(config))
    return project


# ---------------------------------------------------------------------------- copying out

_ISO_DAY = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)(?=T|\b)")
_EPOCH = re.compile(r"(?<![\d.])(1[6-9]\d{8})(\d{3})?(?![\d.])")


def day_earlier(data: str, now: float) -> str:
    """Batch 1 written a night earlier: ISO dates and epoch times near `now` one day back."""

    def iso(m: re.Match) -> str:
        day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        if abs((dt.date.fromtimestamp(now) - day).days) > 2:
            return m[0]
        return (day - dt.timedelta(days=1)).isoformat()

    def epoch(m: re.Match) -> str:
        seconds = int(m[1])
        if abs(seconds - now) > 3 * 86400:
            return m[0]
        return str(seconds - 86400) + (m[2] or "")

    return _EPOCH.sub(epoch, _ISO_DAY.sub(iso, data))


def _codex_path_earlier(rel: str, now: float) -> str:
    """sessions/YYYY/MM/DD/rollout-YYYY-MM-DDT…: the same day shift in the path."""
    moved = day_earlier(rel, now)
    m = re.search(r"rollout-(\d{4})-(\d\d)-(\d\d)", moved)
    return (
        re.sub(r"sessions/\d{4}/\d\d/\d\d/", f"sessions/{m[1]}/{m[2]}/{m[3]}/", moved)
        if m
        else moved
    )


def copy_out(home: Path, out: Path, batch_one: set[Path], now: float) -> dict[Path, str]:
    """The stores copied to `out` with the private home scrubbed; returns each source
    file's path relative to `out`."""
    private = str(home)
    enc = lambda p: re.sub(r"[^A-Za-z0-9]", "-", p)  # noqa: E731
    written = {}
    for tool, root in (("claude", home / ".claude"), ("codex", home / ".codex")):
        store = root / ("projects" if tool == "claude" else "sessions")
        for file in sorted(store.rglob("*.jsonl")):
            rel = str(file.relative_to(root)).replace(enc(private), enc(FIXTURE_HOME))
            data = file.read_text(encoding="utf-8").replace(private, FIXTURE_HOME)
            data = data.replace(private.lstrip("/"), FIXTURE_HOME.lstrip("/"))
            data = data.replace(enc(private), enc(FIXTURE_HOME))  # folder names that encode it
            if file in batch_one:
                data = day_earlier(data, now)
                rel = _codex_path_earlier(rel, now) if tool == "codex" else rel
            target = out / tool / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(data, encoding="utf-8")
            written[file] = str(target.relative_to(out))
    return written


def _stores(home: Path) -> set[Path]:
    return set((home / ".claude" / "projects").rglob("*.jsonl")) | set(
        (home / ".codex" / "sessions").rglob("*.jsonl")
    )


# ---------------------------------------------------------------------------- main


def committed_at(batch: int) -> dt.datetime:
    """When the person commits a session's work: now, right after the session (batch 1's a
    day earlier, as its transcripts are moved); never the batch's start, which would date
    the work before the session that did it."""
    return dt.datetime.now(dt.UTC) - dt.timedelta(days=1 if batch == 1 else 0)


def make_corpus(out: Path, script) -> None:
    home = Path(tempfile.mkdtemp(prefix="ccorpus-"))
    now = time.time()
    today = dt.datetime.fromtimestamp(now, dt.UTC)
    sessions: list[Session] = script.SESSIONS
    try:
        project = make_project(home, script, today - dt.timedelta(days=3))
        model = ScriptedModel(project, sessions, script.TITLE)
        files: dict[str, Path] = {}
        commits: dict[str, tuple[str, str | None]] = {}
        with LoopbackAgentModels(model) as server:
            for session in sessions:
                before = _stores(home)
                base = git(project, "rev-parse", "HEAD")
                run = run_claude if session.agent == "claude" else run_codex
                run(home, project, server, session, model)
                new = sorted(_stores(home) - before)
                mains = [p for p in new if "subagents" not in p.parts]
                if len(mains) != 1:
                    raise SystemExit(f"{session.key}: expected one new transcript, got {new}")
                files[session.key] = mains[0]
                after = None
                if session.commit:
                    git(project, "add", "-A")
                    time.sleep(1.1)  # a second after the session's last entry
                    git(project, "commit", "-qm", session.commit,
                        when=committed_at(session.batch))  # fmt: skip
                    after = git(project, "rev-parse", "HEAD")
                commits[session.key] = (base, after)
                time.sleep(1.1)
        batch_one = {p for s in sessions if s.batch == 1 for p in _stores(home)
                     if p == files[s.key] or files[s.key].stem in str(p)}  # fmt: skip
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        written = copy_out(home, out, batch_one, now)
        git(project, "bundle", "create", str(out / "project.bundle"), "--all")
        labels = labels_of(script, {k: written[p] for k, p in files.items()}, commits,
                           FIXTURE_HOME, now)  # fmt: skip
        (out / "labels.json").write_text(json.dumps(labels, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {out}")
    except BaseException:
        print(f"kept {home} to look at")
        raise
    shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--script", default="tests.support.corrections_script",
                        help="the module with the project, sessions and preferences")  # fmt: skip
    args = parser.parse_args()
    make_corpus(args.out.resolve(), importlib.import_module(args.script))


if __name__ == "__main__":
    main()
