"""Hostile homes for `skillopt integrations install|uninstall`: broken or odd configs,
symlinks, CRLF, files and folders swapped, read-only homes, a tampered install record, and
the real Codex CLI rewriting its config in between. A refusal is one line, exit 2, and the
home unchanged; what install does keep every byte it does not own."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.cli_in_process import run_main

ROOT = Path(__file__).resolve().parents[3]
MODULE_MAIN = ROOT / "skillopt_tui" / "__main__.py"  # sys.argv[0] under `python -m`
CODEX = ROOT / ".tools" / "agents" / "node_modules" / ".bin" / "codex"
SERVER = "skillopt"
BEGIN = "# BEGIN skillopt (written by `skillopt integrations install codex`; uninstall removes it)"


def skillopt(home: Path, *args: str, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    """`python -m skillopt_tui integrations ...`: in this process (the same entry point and
    environment, tests/support/cli_in_process.py), or as a real process under `wrap` (the
    read-only home runs as another user), which also keeps the process boundary tested."""
    args = ("integrations", *args, "--home", str(home))
    if wrap is None:
        return run_main(list(args), env=os.environ, cwd=ROOT, argv0=str(MODULE_MAIN))
    argv = [sys.executable, "-m", "skillopt_tui", *args]
    return subprocess.run([*wrap, *argv], capture_output=True, text=True, cwd=ROOT, check=False)


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under root: bytes for files, the target for links, mode for all."""
    out: dict[str, object] = {}
    for path in sorted(root.rglob("*")):
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            out[str(path.relative_to(root))] = ("link", os.readlink(path))
        elif stat.S_ISREG(info.st_mode):
            out[str(path.relative_to(root))] = (path.read_bytes(), stat.S_IMODE(info.st_mode))
        else:
            out[str(path.relative_to(root))] = ("dir", stat.S_IMODE(info.st_mode))
    return out


def assert_refused(done: subprocess.CompletedProcess, expected: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("skillopt: error: "), done.stderr
    assert expected in lines[0], lines[0]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


# -- refused before anything is written ------------------------------------------------

CLAUDE_BAD = [
    (b'{"numStartups": 3,', "not valid JSON"),
    (b"[1, 2]", "expected a JSON object, found an array"),
    (b'\xef\xbb\xbf{"numStartups": 3}', "byte-order mark"),
    (b'{"mcpServers": ["a"]}', "mcpServers is an array"),
    (b'{"mcpServers": "x"}', "mcpServers is a string"),
    (b'{"mcpServers": null}', "mcpServers is null"),
    (b'{"a": "\xff\xfe"}', "is not UTF-8"),
    (b'{"mcpServers": {}, "mcpServers": {}}', "appears twice"),
    (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
]


@pytest.mark.parametrize(("content", "expected"), CLAUDE_BAD, ids=[e for _, e in CLAUDE_BAD])
def test_a_bad_claude_json_refuses_and_writes_nothing(home, content, expected):
    (home / ".claude.json").write_bytes(content)
    before = snapshot(home)
    assert_refused(skillopt(home, "install", "claude-code"), expected)
    assert snapshot(home) == before  # no skill, no commands, no record


CODEX_BAD = [
    (b'model = "o3"\n[broken\n', "not valid TOML"),
    (b'model = "\xff"\n', "is not UTF-8"),
    (b'\xef\xbb\xbfmodel = "o3"\n', "byte-order mark"),
    (b'mcp_servers = "x"\n', "mcp_servers is not a table"),
    (b'mcp_servers.skillopt.command = "x"\n', "dotted keys or an inline table"),
    (b'[mcp_servers]\nskillopt = { command = "x" }\n', "dotted keys or an inline table"),
    (b'[mcp_servers]\nskillopt.command = "x"\n', "dotted keys or an inline table"),
    (b'mcp_servers = { other = { command = "x" } }\n', "would not parse as intended"),
    (b"[mcp_servers]\nskillopt = 3\n", "mcp_servers.skillopt is not a table"),
    (b"a = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deeply"),
]


@pytest.mark.parametrize(("content", "expected"), CODEX_BAD, ids=[e for _, e in CODEX_BAD])
def test_a_bad_codex_config_refuses_and_writes_nothing(home, content, expected):
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_bytes(content)
    before = snapshot(home)
    assert_refused(skillopt(home, "install", "codex"), expected)
    assert snapshot(home) == before


def _dir_at_claude_json(home: Path) -> None:
    (home / ".claude.json").mkdir()


def _file_at_claude_dir(home: Path) -> None:
    (home / ".claude").write_text("a file\n")


def _file_at_skills(home: Path) -> None:
    (home / ".claude" / "skills").mkdir(parents=True)
    (home / ".claude" / "skills" / "skillopt-sleep").write_text("a file\n")


def _dir_at_skill(home: Path) -> None:
    (home / ".claude" / "skills" / "skillopt-sleep" / "SKILL.md").mkdir(parents=True)


def _file_at_local(home: Path) -> None:
    (home / ".local").write_text("a file\n")


def _backup_in_the_way(home: Path) -> None:
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    (home / ".claude.json.skillopt-backup").write_text("an older backup\n")


def _dangling_link(home: Path) -> None:
    (home / ".claude.json").symlink_to(home / "dotfiles" / "claude.json")


def _link_loop(home: Path) -> None:
    (home / ".claude.json").symlink_to(home / ".claude.json")


def _fifo(home: Path) -> None:
    os.mkfifo(home / ".claude.json")


def _bad_record(home: Path) -> None:
    record = home / ".local" / "state" / "skillopt" / "integrations" / "claude-code.json"
    record.parent.mkdir(parents=True)
    record.write_bytes(b"\xff\xfe not json")


@pytest.mark.parametrize(
    ("arrange", "expected"),
    [
        (_dir_at_claude_json, ".claude.json is a directory"),
        (_file_at_claude_dir, ".claude is a file, where install needs a folder"),
        (_file_at_skills, "skillopt-sleep is a file, where install needs a folder"),
        (_dir_at_skill, "SKILL.md is a directory"),
        (_file_at_local, ".local is a file, where install needs a folder"),
        (_backup_in_the_way, ".claude.json.skillopt-backup already exists"),
        (_dangling_link, "which does not exist"),
        (_link_loop, "symlink loop"),
        (_fifo, "is not a regular file"),
        (_bad_record, "unreadable install record"),
    ],
)
def test_a_home_that_is_not_as_expected_refuses_and_writes_nothing(home, arrange, expected):
    arrange(home)
    before = snapshot(home)
    assert_refused(skillopt(home, "install", "claude-code"), expected)
    assert snapshot(home) == before


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_home_that_is_no_folder_refuses(tmp_path, kind):
    home = tmp_path / "home"
    if kind == "file":
        home.write_text("x\n")
    for command in ("install", "uninstall", "list"):
        assert_refused(skillopt(home, command, *(["codex"] if command != "list" else [])), "--home")
    assert (home.read_text() == "x\n") if kind == "file" else not home.exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap for a read-only home")
@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_a_read_only_home_refuses_and_writes_nothing(home, agent):
    (home / ".claude.json").write_text('{"numStartups": 1}\n')
    before = snapshot(home)
    read_only = ["bwrap", "--bind", "/", "/", "--dev", "/dev", "--ro-bind", str(home), str(home)]
    assert_refused(skillopt(home, "install", agent, wrap=read_only), "is not writable")
    assert snapshot(home) == before


# -- bytes, line endings and links kept ------------------------------------------------


@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_crlf_stays_crlf(home, agent):
    if agent == "codex":
        config = home / ".codex" / "config.toml"
        config.parent.mkdir()
        original = b'model = "o3"\r\n\r\n[tui]\r\nx = 1\r\n'
    else:
        config = home / ".claude.json"
        original = b'{\r\n  "numStartups": 3,\r\n  "mcpServers": {}\r\n}\r\n'
    config.write_bytes(original)
    assert skillopt(home, "install", agent).returncode == 0
    written = config.read_bytes()
    assert written.count(b"\n") == written.count(b"\r\n") and written.startswith(original[:8])
    config.write_bytes(written.replace(b"3", b"4", 1) if agent != "codex" else written)
    assert skillopt(home, "uninstall", agent).returncode == 0
    final = config.read_bytes()
    assert final.count(b"\n") == final.count(b"\r\n")
    assert final == original or (agent == "claude-code" and final == original.replace(b"3", b"4"))


@pytest.mark.parametrize("agent", ["codex", "claude-code"])
@pytest.mark.parametrize("edited", [False, True])
def test_a_symlinked_config_stays_a_link(home, agent, edited):
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    if agent == "codex":
        target, link = dotfiles / "config.toml", home / ".codex" / "config.toml"
        target.write_text('model = "o3"\n')
        link.parent.mkdir()
    else:
        target, link = dotfiles / "claude.json", home / ".claude.json"
        target.write_text('{"numStartups": 3}\n')
    link.symlink_to(target)
    original = target.read_bytes()
    assert skillopt(home, "install", agent).returncode == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert SERVER.encode() in target.read_bytes()
    if edited:  # the agent saved its config meanwhile (through the link)
        target.write_bytes(target.read_bytes().replace(b"o3", b"o4").replace(b"3", b"4", 1))
    done = skillopt(home, "uninstall", agent)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    expected = original.replace(b"o3", b"o4").replace(b"3", b"4", 1) if edited else original
    assert target.read_bytes() == expected
    assert not Path(f"{link}.skillopt-backup").exists() or edited


# -- Codex configs: our block found by its table, whatever happened to the markers ------


def codex_home(home: Path, text: str) -> Path:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(text)
    return config


OUR_TABLE = '[mcp_servers.skillopt]\ncommand = "/old/skillopt"\nargs = ["mcp"]\n'


@pytest.mark.parametrize(
    "text",
    [
        f'model = "o3"\n\n{BEGIN}\n{OUR_TABLE}# END skillopt\n\n# keep me\n[tui]\nx = 1\n'
        f"{BEGIN}\n{OUR_TABLE}# END skillopt\n",  # our block twice (the table too: invalid)
        f'model = "o3"\n{BEGIN}\n{OUR_TABLE}# keep me\n[profiles.work]\nmodel = "o4"\n',
        f'model = "o3"\n{OUR_TABLE}# END skillopt\n# keep me\n[profiles.work]\nmodel = "o4"\n',
        f'# keep me\n{OUR_TABLE}[mcp_servers.skillopt.env]\nA = "1"\n\n[profiles.work]\nx = 1\n',
        'x = """\n[mcp_servers.skillopt]\n"""\n# keep me\n[profiles.work]\na = [\n[1],\n]\n',
    ],
)
def test_codex_markers_copied_or_lost_never_cost_user_lines(home, text):
    config = codex_home(home, text)
    try:
        user = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        user = None
    done = skillopt(home, "install", "codex")
    if user is None:  # the doubled table is invalid TOML: refused, untouched
        assert_refused(done, "not valid TOML")
        assert config.read_text() == text
        return
    assert done.returncode == 0, done.stderr
    written = config.read_text()
    data = tomllib.loads(written)
    assert data["mcp_servers"][SERVER]["args"] == ["mcp"]
    assert written.count(BEGIN) == 1 and written.count("# END skillopt") == 1
    assert "# keep me" in written
    for key in user:
        if key != "mcp_servers":
            assert data[key] == user[key]
    config.write_text(written.replace(BEGIN + "\n", ""))  # lose a marker meanwhile
    assert skillopt(home, "uninstall", "codex").returncode == 0
    final = config.read_text()
    assert "# keep me" in final and BEGIN not in final and "# END skillopt" not in final
    assert SERVER not in tomllib.loads(final).get("mcp_servers", {})
    assert {k: v for k, v in tomllib.loads(final).items() if k != "mcp_servers"} == {
        k: v for k, v in user.items() if k != "mcp_servers"
    }


def test_codex_the_doubled_block_with_one_table_is_cleaned(home):
    text = (
        f'model = "o3"\n{BEGIN}\n# END skillopt\n\n# keep me\n{BEGIN}\n{OUR_TABLE}# END skillopt\n'
    )
    config = codex_home(home, text)
    assert skillopt(home, "install", "codex").returncode == 0
    written = config.read_text()
    assert written.count(BEGIN) == 1 and "# keep me" in written
    assert tomllib.loads(written)["model"] == "o3"


def test_codex_other_inline_servers_stay_and_the_result_parses(home):
    text = '[mcp_servers]\nother = { command = "o" }\n'
    config = codex_home(home, text)
    assert skillopt(home, "install", "codex").returncode == 0
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["other"] == {"command": "o"} and SERVER in data["mcp_servers"]
    config.write_text(config.read_text() + '\n[profiles.work]\nmodel = "o4"\n')
    assert skillopt(home, "uninstall", "codex").returncode == 0
    assert config.read_text() == text + '\n[profiles.work]\nmodel = "o4"\n'


@pytest.mark.skipif(not CODEX.exists(), reason="needs the pinned codex CLI in .tools")
def test_after_the_real_codex_rewrites_its_config_uninstall_keeps_the_users_tables(home):
    config = codex_home(home, 'model = "o3"\n\n[profiles.work]\nmodel = "o4"\n')
    assert skillopt(home, "install", "codex").returncode == 0
    env = {**os.environ, "CODEX_HOME": str(home / ".codex"), "HOME": str(home)}
    added = subprocess.run(
        [str(CODEX), "mcp", "add", "other", "--", "/bin/true"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    rewritten = config.read_text()
    assert BEGIN not in rewritten  # Codex dropped our marker and moved the END one
    done = skillopt(home, "uninstall", "codex")
    assert done.returncode == 0, done.stderr
    final = tomllib.loads(config.read_text())
    assert final["profiles"] == {"work": {"model": "o4"}} and final["model"] == "o3"
    assert final["mcp_servers"] == {"other": {"command": "/bin/true"}}
    assert "skillopt" not in config.read_text()


# -- the install record is confined to what install writes -----------------------------


def _record(home: Path, agent: str) -> Path:
    return home / ".local" / "state" / "skillopt" / "integrations" / f"{agent}.json"


@pytest.mark.parametrize(
    "tamper",
    [
        lambda data, home, secret: data["entries"][str(home / ".claude.json")].update(
            backup=str(secret)
        ),
        lambda data, home, secret: data["entries"].update(
            {str(secret): {"existed": True, "backup": None, "written": "x"}}
        ),
        lambda data, home, secret: data["created_dirs"].append(str(secret.parent)),
        lambda data, home, secret: data["created_dirs"].append(str(home / "a" / ".." / "..")),
        lambda data, home, secret: data["created_dirs"].append(str(home)),
        lambda data, home, secret: data["entries"][str(home / ".claude.json")].update(existed=1),
    ],
)
def test_a_tampered_record_moves_nothing(tmp_path, home, tamper):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("do not move me\n")
    (home / ".claude.json").write_text('{"numStartups": 3}\n')
    assert skillopt(home, "install", "claude-code").returncode == 0
    record = _record(home, "claude-code")
    data = json.loads(record.read_text())
    tamper(data, home, secret)
    record.write_text(json.dumps(data))
    before, outside = snapshot(home), snapshot(secret.parent)
    assert_refused(skillopt(home, "uninstall", "claude-code"), "install record")
    assert snapshot(home) == before and snapshot(secret.parent) == outside


def test_a_backup_replaced_by_a_link_is_not_followed(tmp_path, home):
    (home / ".claude.json").write_text('{"numStartups": 3}\n')
    assert skillopt(home, "install", "claude-code").returncode == 0
    backup = home / ".claude.json.skillopt-backup"
    backup.unlink()
    backup.symlink_to("/etc/hostname")
    before = snapshot(home)
    assert_refused(skillopt(home, "uninstall", "claude-code"), "is not a regular file")
    assert snapshot(home) == before


# -- uninstall takes out only our entry -------------------------------------------------


def test_claude_uninstall_after_edits_keeps_the_users_bytes(home):
    original = '{\n    "numStartups": 3,\n    "tips": "caf\\u00e9",\n    "z": [1, 2]\n}\n'
    config = home / ".claude.json"
    config.write_text(original)
    assert skillopt(home, "install", "claude-code").returncode == 0
    installed = config.read_text()
    assert installed.startswith('{\n    "numStartups": 3,\n    "tips": "caf\\u00e9",')
    assert json.loads(installed)["mcpServers"][SERVER]["args"] == ["mcp"]
    config.write_text(installed.replace('"numStartups": 3', '"numStartups": 4'))
    assert skillopt(home, "uninstall", "claude-code").returncode == 0
    assert config.read_text() == original.replace('"numStartups": 3', '"numStartups": 4')


def test_uninstall_refuses_when_the_config_broke_since(home):
    (home / ".claude.json").write_text('{"numStartups": 3}\n')
    assert skillopt(home, "install", "claude-code").returncode == 0
    (home / ".claude.json").write_text('{"numStartups": ')
    before = snapshot(home)
    assert_refused(skillopt(home, "uninstall", "claude-code"), "not valid JSON")
    assert snapshot(home) == before  # the record stays: fix the file and uninstall again


def test_backup_keeps_the_originals_permissions(home):
    config = home / ".claude.json"
    config.write_text('{"numStartups": 3, "token": "private"}\n')
    config.chmod(0o600)
    assert skillopt(home, "install", "claude-code").returncode == 0
    backup = home / ".claude.json.skillopt-backup"
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


def test_an_owned_file_turned_into_a_folder_is_kept_and_the_rest_undone(home):
    config = codex_home(home, 'model = "o3"\n')
    assert skillopt(home, "install", "codex").returncode == 0
    skill = home / ".agents" / "skills" / "skillopt-sleep" / "SKILL.md"
    skill.unlink()
    skill.mkdir()
    done = skillopt(home, "uninstall", "codex")
    assert done.returncode == 0, done.stderr
    assert f"keep      {skill}" in done.stdout and skill.is_dir()
    assert config.read_text() == 'model = "o3"\n'


@pytest.mark.parametrize(
    "content", ["[]", '{"entries": [], "created_dirs": []}', '{"created_dirs": []}', "null"]
)
def test_a_record_of_the_wrong_shape_is_one_plain_line(home, content):
    record = _record(home, "codex")
    record.parent.mkdir(parents=True)
    record.write_text(content)
    before = snapshot(home)
    for command in ("install", "uninstall"):
        done = skillopt(home, command, "codex")
        assert_refused(done, "unreadable install record")
        assert "indices" not in done.stderr and "NoneType" not in done.stderr
    assert snapshot(home) == before


def test_list_and_uninstall_work_without_skillopt_on_path(home):
    (home / ".claude.json").write_text('{"numStartups": 3}\n')
    before = snapshot(home)
    assert skillopt(home, "install", "claude-code").returncode == 0
    bare = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))}
    python = "/nonexistent-venv/bin/python"  # no `skillopt` beside it either
    for args in (["list"], ["uninstall", "claude-code"]):
        done = subprocess.run(
            [sys.executable, "-c", f"import sys; sys.executable = {python!r}; "
             "from skillopt_tui.cli.main import main; main()",
             "integrations", *args, "--home", str(home)],
            capture_output=True, text=True, cwd=ROOT, env=bare, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert snapshot(home) == before
