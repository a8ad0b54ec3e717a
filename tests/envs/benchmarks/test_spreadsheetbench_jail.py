"""Hostile generated programs against the spreadsheetbench sandbox with bubblewrap present:
each escape the audit hook alone let through (exec through a module that skips the hook,
a fork bomb, a `setsid` survivor, writes outside, UDP/TCP to loopback, signals to other
processes, reading files outside the item including its answer workbook) is stopped by the
jail. The programs get past the audit hook the way a hostile one did before the boot closed
`_posixsubprocess.fork_exec`: subprocess's own `sys.audit` call replaced, so `fork_exec`
runs with no event raised. To show the jail holds on its own, these tests run a copy of the
boot with that closure off (a TEST DOUBLE of the boot; tests/envs/benchmarks/
test_spreadsheetbench.py shows the closure refuses the same programs)."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import uuid

import pytest

openpyxl = pytest.importorskip("openpyxl")

from core.config import EnvConfig  # noqa: E402
from envs import get_environment  # noqa: E402
from envs.jail import jail_problem  # noqa: E402
from envs.spreadsheetbench.materialize import materialize  # noqa: E402
from envs.spreadsheetbench.sandbox import Limits, run_program  # noqa: E402
from tests.envs.benchmarks.fixtures import (  # noqa: E402
    spreadsheet_release,
    workbook,
    write_manifest,
)

pytestmark = pytest.mark.skipif(
    bool(jail_problem()), reason=f"no bubblewrap jail here: {jail_problem()}"
)

# Spawns processes with no audit event: the hook never sees them.
PAST_THE_HOOK = textwrap.dedent(
    """
    import subprocess, sys

    class _NoAudit:
        def __getattr__(self, name):
            return getattr(sys, name)

        @staticmethod
        def audit(*args):
            pass

    subprocess.sys = _NoAudit()

    def spawn(argv, **options):
        try:
            return subprocess.Popen(argv, **options)
        except OSError as exc:
            print("spawn failed:", type(exc).__name__)
            return None

    def python(code, *extra, **options):
        return spawn([sys.executable, "-c", code, *extra], **options)
    """
)


@pytest.fixture(autouse=True)
def boot_without_the_fork_exec_closure(tmp_path_factory, monkeypatch):
    from envs.spreadsheetbench import sandbox

    text = sandbox.BOOT.read_text()
    assert "\nCLOSE_FORK_EXEC = True\n" in text
    copy = tmp_path_factory.mktemp("boot") / sandbox.BOOT.name
    copy.write_text(text.replace("\nCLOSE_FORK_EXEC = True\n", "\nCLOSE_FORK_EXEC = False\n"))
    monkeypatch.setattr(sandbox, "BOOT", copy)


def hostile(body: str) -> str:
    return PAST_THE_HOOK + textwrap.dedent(body)


@pytest.fixture
def input_book(tmp_path):
    workbook(tmp_path / "in.xlsx", with_sums=False)
    return tmp_path / "in.xlsx"


def run(code, input_book, tmp_path, **limits):
    return run_program(code, input_book, tmp_path / "out", Limits(**{"timeout_s": 20.0, **limits}))


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_hook_is_really_bypassed_by_these_programs(input_book, tmp_path):
    """The bypass works (a child process starts): the jail, not the hook, stops what follows."""
    code = hostile("child = python('print(\"child ran\")')\nchild.wait()\n")
    result = run(code, input_book, tmp_path)
    assert "child ran" in result.stdout, result.stderr


def test_exec_of_any_binary_finds_nothing_to_run(input_book, tmp_path):
    marker = tmp_path / "pwned"
    code = hostile(
        f"""
        for argv in (["/bin/sh", "-c", "touch {marker}"], ["/usr/bin/env"], ["sh"]):
            child = spawn(argv)
            if child:
                child.wait()
        import os
        try:
            os.execv("/bin/sh", ["sh", "-c", "touch {marker}"])
        except (OSError, PermissionError) as exc:
            print("execv failed:", type(exc).__name__)
        """
    )
    result = run(code, input_book, tmp_path)
    assert result.stdout.count("spawn failed: FileNotFoundError") == 3, result.stderr
    assert "execv failed: PermissionError" in result.stdout
    assert not marker.exists()


def test_a_bounded_fork_bomb_hits_the_process_limit(input_book, tmp_path):
    code = hostile(
        """
        started = 0
        for _ in range(60):
            if python("import time; time.sleep(5)") is None:
                break
            started += 1
        print("started", started)
        """
    )
    result = run(code, input_book, tmp_path, max_processes=8)
    started = int(result.stdout.split("started")[-1])
    assert started < 8, result.stdout  # the program itself is one of the eight


@pytest.mark.parametrize("then", ["while True:\n    pass\n", "print('left it running')\n"])
def test_a_setsid_grandchild_dies_with_the_jail(input_book, tmp_path, then):
    """At the timeout, or when the program exits first: its `setsid` grandchild is gone by
    the time run_program returns, and never writes its file."""
    marker = f"skillopt-survivor-{uuid.uuid4().hex}"
    late = tmp_path / "late.txt"
    code = (
        hostile(
            f"""
        survivor = "import time\\ntime.sleep(3)\\nopen({str(late)!r}, 'w').write('late')"
        python(survivor, {marker!r}, start_new_session=True)
        """
        )
        + then
    )
    result = run(code, input_book, tmp_path, timeout_s=3.0)
    assert result.timed_out == then.startswith("while")
    assert processes_with(marker) == []
    assert not late.exists()


def test_writes_outside_the_work_folder_land_nowhere(input_book, tmp_path):
    database, fifo = tmp_path / "outside.db", tmp_path / "outside.fifo"
    code = hostile(
        f"""
        import os, sqlite3
        for attempt in (
            lambda: sqlite3.connect({str(database)!r}).execute("create table t (x)"),
            lambda: os.mkfifo({str(fifo)!r}),
        ):
            try:
                attempt()
            except Exception as exc:
                print("refused:", type(exc).__name__)
        child = python(
            "import os, sqlite3\\n"
            "try:\\n    sqlite3.connect({str(database)!r}).execute('create table t (x)')\\n"
            "except Exception as exc: print('child refused:', type(exc).__name__)\\n"
            "try:\\n    os.mkfifo({str(fifo)!r})\\n"
            "except Exception as exc: print('child refused:', type(exc).__name__)\\n"
        )
        child.wait()
        """
    )
    result = run(code, input_book, tmp_path)
    assert result.stdout.count("refused:") == 4, result.stdout + result.stderr
    assert not database.exists() and not fifo.exists()


def test_udp_and_tcp_to_loopback_reach_nothing(input_book, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, socket.socket() as tcp:
        udp.bind(("127.0.0.1", 0))
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(5)
        udp.setblocking(False)
        tcp.setblocking(False)
        udp_port, tcp_port = udp.getsockname()[1], tcp.getsockname()[1]
        network = (
            "import socket\n"
            "for attempt in (\n"
            f"    lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', "
            f"('127.0.0.1', {udp_port})),\n"
            f"    lambda: socket.create_connection(('127.0.0.1', {tcp_port}), timeout=2),\n"
            "):\n"
            "    try:\n        attempt()\n        print('reached')\n"
            "    except OSError as exc:\n        print('unreachable:', type(exc).__name__)\n"
        )
        code = hostile(f"exec({network!r})\npython({network!r}).wait()\n")
        result = run(code, input_book, tmp_path)
        with pytest.raises(BlockingIOError):
            udp.recvfrom(16)
        with pytest.raises(BlockingIOError):
            tcp.accept()
    assert result.stdout.count("unreachable:") >= 3, result.stdout + result.stderr


def test_signals_reach_no_process_outside_the_jail(input_book, tmp_path):
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        kill = (
            "import os, signal\n"
            f"for pid, sig in ((1, 0), ({bystander.pid}, signal.SIGKILL)):\n"
            "    try:\n        os.kill(pid, sig)\n        print('signalled', pid)\n"
            "    except OSError as exc:\n        print('refused:', type(exc).__name__)\n"
        )
        code = hostile(f"exec({kill!r})\npython({kill!r}).wait()\n")
        result = run(code, input_book, tmp_path)
        assert bystander.poll() is None  # still running
        assert "signalled" not in result.stdout and result.stdout.count("refused:") == 4
    finally:
        bystander.send_signal(signal.SIGKILL)
        bystander.wait()


def test_files_outside_the_item_are_not_there_to_read(input_book, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("the-secret-text")
    read = (
        "for path in ('/etc/passwd', '/etc/hostname', "
        f"{str(secret)!r}, '/root/.bashrc', '/proc/1/environ'):\n"
        "    try:\n        print(open(path).read()[:200])\n"
        "    except OSError as exc:\n        print('refused:', type(exc).__name__)\n"
    )
    code = hostile(f"exec({read!r})\npython({read!r}).wait()\n")
    result = run(code, input_book, tmp_path)
    assert "the-secret-text" not in result.stdout and "root:" not in result.stdout
    assert result.stdout.count("refused:") == 10, result.stdout + result.stderr


def test_the_answer_workbook_cannot_be_copied_into_the_output(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    materialize(spreadsheet_release(tmp_path / "release"), tmp_path / "data", manifest)
    env = get_environment(
        EnvConfig(
            name="spreadsheetbench",
            manifest_dir=str(manifest),
            data_dir=str(tmp_path / "data"),
            options={"exec_timeout_s": 20.0},
        )
    )
    item = env.load_split("val")[0]
    answer = item.data["cases"][0]["answer"]
    copy = f"import shutil\nshutil.copyfile({answer!r}, 'output.xlsx')\n"
    for cheat in (copy, hostile(f"python({copy!r}).wait()\n")):
        score = env.score(item, cheat)
        assert (score.hard, score.soft) == (0.0, 0.0), score.explanation


def test_an_output_workbook_that_unpacks_huge_is_unreadable_not_loaded(tmp_path, monkeypatch):
    from envs.spreadsheetbench import compare

    monkeypatch.setattr(compare, "MAX_UNPACKED_BYTES", 4 * 1024 * 1024)  # the test writes less
    gold = tmp_path / "gold.xlsx"
    workbook(gold, with_sums=True)
    bomb = textwrap.dedent(
        """
        import zipfile
        with zipfile.ZipFile("output.xlsx", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("xl/worksheets/sheet1.xml", b"0" * (8 * 1024 * 1024))
        """
    )
    result = run(bomb, gold, tmp_path)
    assert result.ok, result.stderr
    comparison = compare.compare_workbooks(gold, result.output, "Data!C2:C3")
    assert comparison.correct == 0 and "unpacks to more than 4 MB" in comparison.first_mismatch
