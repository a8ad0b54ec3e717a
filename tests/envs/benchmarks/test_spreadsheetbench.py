"""`spreadsheetbench`: the sandbox's limits, one rollout with error feedback through the
scripted TEST DOUBLE, cell scoring, the missing-data error and `materialize` from the
published release layout (folder and .tar.gz)."""

import os
import tarfile
import tempfile

import pytest

openpyxl = pytest.importorskip("openpyxl")

from core.config import EnvConfig  # noqa: E402
from envs import get_environment  # noqa: E402
from envs.jail import WORK  # noqa: E402
from envs.split_data import MissingDataError  # noqa: E402
from envs.spreadsheetbench.materialize import materialize  # noqa: E402
from envs.spreadsheetbench.sandbox import Limits, run_program  # noqa: E402
from tests.envs.benchmarks.fixtures import (  # noqa: E402
    SOLUTION,
    scripted_client,
    spreadsheet_release,
    workbook,
    write_manifest,
)


@pytest.fixture
def materialised(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    report = materialize(spreadsheet_release(tmp_path / "release"), tmp_path / "out", manifest)
    return manifest, tmp_path / "out", report


def env_for(manifest, data, **options):
    return get_environment(
        EnvConfig(
            name="spreadsheetbench", manifest_dir=str(manifest), data_dir=str(data), options=options
        )
    )


def test_materialize_from_the_release_folder(materialised):
    manifest, out, report = materialised
    assert report.counts == {"train": 2, "val": 1, "test": 1} and report.files == 16
    item = env_for(manifest, out).load_split("val")[0]
    assert len(item.data["cases"]) == 2 and item.data["answer_position"] == "Data!C2:C3"


def test_materialize_from_the_release_archive(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    folder = spreadsheet_release(tmp_path / "spreadsheetbench_verified_400")
    archive = tmp_path / "spreadsheetbench_verified_400.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    assert materialize(archive, tmp_path / "out", manifest).counts["train"] == 2


async def test_rollout_feeds_errors_back_until_the_program_works(materialised):
    manifest, out, _ = materialised
    env = env_for(manifest, out, exec_timeout_s=20.0)
    replies = iter(["```python\nraise ValueError('bad column')\n```", SOLUTION])
    seen = []

    def responder(request):
        seen.append(request)
        return next(replies)

    async with scripted_client(responder) as client:
        result = await env.rollout(env.load_split("val")[0], "", client.bind("target"))
    assert len(seen) == 2
    assert "ValueError: bad column" in seen[1].messages[-1]["content"]
    assert (result.hard, result.soft) == (1.0, 1.0)


def test_a_program_written_to_the_published_harness_runs(materialised):
    """INPUT_PATH and OUTPUT_PATH are set for the program (its own assignments removed, as
    published), and the first fenced block is the program. Fails on the old code: the
    names were undefined, and the last block (a usage note) was taken."""
    manifest, out, _ = materialised
    env = env_for(manifest, out, exec_timeout_s=20.0)
    program = (
        SOLUTION.replace('"input.xlsx"', "INPUT_PATH")
        .replace('"output.xlsx"', "OUTPUT_PATH")
        .replace("import openpyxl", 'import openpyxl\nINPUT_PATH = "/elsewhere/in.xlsx"')
    )
    score = env.score(env.load_split("val")[0], f"{program}\nRun it with:\n```sh\npython s.py\n```")
    assert (score.hard, score.soft) == (1.0, 1.0)


def test_scoring_counts_cells(materialised):
    manifest, out, _ = materialised
    env = env_for(manifest, out, exec_timeout_s=20.0)
    item = env.load_split("val")[0]
    half = SOLUTION.replace("range(2, 4)", "range(2, 3)")
    score = env.score(item, half)
    assert (score.hard, score.soft) == (0.0, 0.5)
    assert "Data!C3" in score.explanation
    broken = env.score(item, "def broken(:\n")
    assert (broken.hard, broken.soft) == (0.0, 0.0) and "SyntaxError" in broken.explanation


async def test_cell_feedback_only_on_training_items(materialised):
    manifest, out, _ = materialised
    env = env_for(manifest, out, exec_timeout_s=20.0, train_cell_feedback=True, max_turns=2)
    half = SOLUTION.replace("range(2, 4)", "range(2, 3)")
    for split, expected_calls in (("train", 2), ("val", 1)):
        calls = []

        def responder(request, calls=calls):
            calls.append(request)
            return half

        async with scripted_client(responder) as client:
            await env.rollout(env.load_split(split)[0], "", client.bind("target"))
        assert len(calls) == expected_calls
        if split == "train":
            assert "cells are wrong" in calls[1].messages[-1]["content"]


def test_missing_data_error(tmp_path):
    env = get_environment(EnvConfig(name="spreadsheetbench", data_dir=str(tmp_path)))
    with pytest.raises(MissingDataError, match="skillopt data materialize spreadsheetbench"):
        env.load_split("train")


# ---------------------------------------------------------------- the sandbox


@pytest.fixture
def input_book(tmp_path):
    workbook(tmp_path / "in.xlsx", with_sums=False)
    return tmp_path / "in.xlsx"


def test_a_program_that_loops_forever_is_stopped(input_book, tmp_path):
    result = run_program(
        "while True:\n    pass\n", input_book, tmp_path / "o", Limits(timeout_s=1.0)
    )
    assert result.timed_out and not result.ok and "time limit" in result.problem()


def test_unbounded_allocation_hits_the_memory_limit(input_book, tmp_path):
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(50_000_000))\n"
    result = run_program(code, input_book, tmp_path / "o", Limits(timeout_s=20.0, memory_mb=512))
    assert not result.ok and not result.timed_out and "MemoryError" in result.stderr


def test_writing_outside_the_working_directory_is_refused(input_book, tmp_path):
    target = tmp_path / "escaped.txt"
    for code in (
        f"open({str(target)!r}, 'w').write('x')",
        "open('../escaped.txt', 'w').write('x')",
        f"import os\nos.remove({str(input_book)!r})",
        "import subprocess\nsubprocess.run(['touch', '/tmp/skillopt-escape'])",
    ):
        result = run_program(code, input_book, tmp_path / "o", Limits(timeout_s=10.0))
        assert not result.ok and "sandbox:" in result.stderr
    assert not target.exists() and input_book.exists()


def test_the_program_cannot_read_our_environment(input_book, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    code = "import os\nprint(sorted(os.environ))\nprint(os.environ.get('OPENAI_API_KEY'))"
    result = run_program(code, input_book, tmp_path / "o", Limits(timeout_s=10.0))
    assert "sk-test-secret-value" not in result.stdout
    assert result.stdout.splitlines()[-1] == "None"
    assert "OPENAI_API_KEY" not in result.stdout


def test_output_is_cut_and_the_cwd_is_a_fresh_temporary_folder(input_book, tmp_path, monkeypatch):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    code = "import os\nprint(os.getcwd())\nprint(sorted(os.listdir('.')))\nprint('x' * 100000)"
    result = run_program(
        code, input_book, tmp_path / "o", Limits(timeout_s=10.0, max_output_chars=500)
    )
    cwd, listing = result.stdout.splitlines()[:2]
    assert cwd == WORK and os.listdir(scratch) == []  # the jail's folder, removed afterwards
    assert listing == "['input.xlsx', 'solution.py']"
    assert result.stdout.endswith("[output cut]") and len(result.stdout) < 600


def test_importing_ctypes_is_allowed_but_loading_or_calling_native_code_is_not(
    input_book, tmp_path
):
    # numpy imports ctypes, and openpyxl imports numpy when it is installed: a workbook
    # program must survive `import ctypes` (which opens only the interpreter's own symbols).
    save = "import openpyxl\nopenpyxl.load_workbook('input.xlsx').save('output.xlsx')\n"
    allowed = run_program(f"import ctypes\n{save}", input_book, tmp_path / "o1", Limits(10.0))
    assert allowed.ok, allowed.stderr
    for code in (
        "import ctypes\nctypes.CDLL('libc.so.6')",
        "import ctypes\nctypes.CDLL(None).getpid()",
    ):
        result = run_program(code, input_book, tmp_path / "o2", Limits(timeout_s=10.0))
        assert not result.ok and "sandbox: ctypes." in result.stderr, code


# A program that silences subprocess's own audit call, then starts a process: before, the
# hook never saw `_posixsubprocess.fork_exec` and the child ran (the jail held it).
_SILENCED = (
    "import subprocess, sys\n"
    "class _NoAudit:\n"
    "    def __getattr__(self, name):\n"
    "        return getattr(sys, name)\n"
    "    @staticmethod\n"
    "    def audit(*args):\n"
    "        pass\n"
    "subprocess.sys = _NoAudit()\n"
)


@pytest.mark.parametrize(
    "start",
    [
        "subprocess.Popen([sys.executable, '-c', 'print(\"child ran\")']).wait()",
        "import _posixsubprocess\n_posixsubprocess.fork_exec()",
        "del sys.modules['_posixsubprocess']\nimport _posixsubprocess",
        "import _imp, importlib.util\n"
        "_imp.create_dynamic(importlib.util.find_spec('_posixsubprocess')).fork_exec()",
    ],
    ids=["silenced-popen", "module", "re-import", "create-dynamic"],
)
def test_fork_exec_is_closed_to_a_program_that_silences_the_hook(input_book, tmp_path, start):
    """Issue 35: `_posixsubprocess.fork_exec` started processes with no audit event."""
    code = _SILENCED + start + "\nprint('child ran')\n"
    result = run_program(code, input_book, tmp_path / "o", Limits(timeout_s=10.0))
    assert "child ran" not in result.stdout and "sandbox:" in result.stderr, result.stderr


def test_a_workbook_program_importing_subprocess_still_runs(input_book, tmp_path):
    code = "import subprocess\nimport openpyxl\n"
    code += "openpyxl.load_workbook('input.xlsx').save('output.xlsx')\n"
    result = run_program(code, input_book, tmp_path / "o", Limits(timeout_s=10.0))
    assert result.ok, result.stderr
