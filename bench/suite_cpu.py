"""CPU per test, to find where the suite's time goes on a machine it shares (issue 36).

On 2 cores with four xdist workers the suite is bound by CPU, not by waiting, so a test's
wall time under load says little about what it costs: this measures what each test burns.
The driver runs the given test paths in one pytest process without workers (`-n 0`) with
this module as a plugin (`-p bench.suite_cpu`), which records per test (setup, call and
teardown together):

- `self`: the pytest process's own user+system CPU;
- `children`: the CPU of the child processes that ended and were waited for during the
  test (`skillopt` commands, git, agent CLIs, and whatever they waited for in turn);
- `server`: the CPU the test session's shared embedded llama.cpp server spent meanwhile
  (tests/support/embedded_session.py; read from /proc, since that server is no child
  anyone waits for) — only embedded tests talk to it.

A daemon a test leaves running, or a grandchild its parent never waits for, is not
counted. Not a test: nothing is asserted. It prints the top tests, the per-file totals,
the tests' total and the whole pytest process's (collection and session teardown too); `--json FILE` keeps every record to compare two checkouts
(run each with PYTHONPATH at its checkout, back to back, on a quiet machine).

Run: PYTHONPATH=$PWD .venv/bin/python bench/suite_cpu.py [--top 30] [--json out.json]
     [--as-worker] [tests/docs/test_examples.py ...] [-- extra pytest args]
`--as-worker` collects the whole suite and runs only the given paths: an xdist worker's
heap and imports, which change what the garbage collector and start-up cost.
With no paths it measures tests/docs/test_first_session.py (one quick sample).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUT_ENV = "SUITE_CPU_OUT"  # where the plugin appends its records (one JSON line per test)
ONLY_ENV = "SUITE_CPU_ONLY"  # --as-worker: the paths to run, os.pathsep-separated
DEFAULT_PATHS = ("tests/docs/test_first_session.py",)
URL_FILE = "embedded.url"  # tests/support/embedded_session.py's: "<url> <pid>"
TICKS = os.sysconf("SC_CLK_TCK")


def _own_and_children() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _server_cpu(folder: Path) -> float:
    """User+system seconds of the session's embedded server so far (0 when none runs)."""
    try:
        pid = (folder / URL_FILE).read_text().split()[1]
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """--as-worker: everything was collected (and imported), as on an xdist worker; only
    the tests under the given paths run."""
    only = os.environ.get(ONLY_ENV)
    if not only:
        return
    wanted = tuple(p.rstrip("/") for p in only.split(os.pathsep))
    keep = [i for i in items if i.nodeid.split("::", 1)[0].startswith(wanted)]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    out = os.environ.get(OUT_ENV)
    folder = item.config._tmp_path_factory.getbasetemp()
    own0, kids0 = _own_and_children()
    server0, wall0 = _server_cpu(folder), time.monotonic()
    yield
    own1, kids1 = _own_and_children()
    server1 = _server_cpu(folder)
    # A server started during this test reads 0 before: all it used counts to this test.
    record = {
        "test": item.nodeid,
        "self": round(own1 - own0, 3),
        "children": round(kids1 - kids0, 3),
        "server": round(max(server1 - server0, 0.0), 3),
        "wall": round(time.monotonic() - wall0, 3),
    }
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def cpu(record: dict) -> float:
    return record["self"] + record["children"] + record["server"]


def report(records: list[dict], top: int) -> str:
    lines = [f"{'cpu_s':>7} {'self':>6} {'child':>6} {'server':>6} {'wall':>6}  test"]
    for r in sorted(records, key=cpu, reverse=True)[:top]:
        lines.append(
            f"{cpu(r):7.2f} {r['self']:6.2f} {r['children']:6.2f} {r['server']:6.2f} "
            f"{r['wall']:6.2f}  {r['test']}"
        )
    per_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    for r in records:
        per_file[r["test"].split("::", 1)[0]][0] += cpu(r)
        per_file[r["test"].split("::", 1)[0]][1] += 1
    lines.append("\nper file (cpu_s, tests):")
    for name, (total, count) in sorted(per_file.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"{total:8.2f} {count:5d}  {name}")
    total = sum(cpu(r) for r in records)
    wall = sum(r["wall"] for r in records)
    lines.append(f"\ntotal: {total:.2f} s CPU in {len(records)} tests ({wall:.1f} s wall)")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--json", type=Path, help="keep every test's record here")
    parser.add_argument(
        "--as-worker",
        action="store_true",
        help="collect all of tests/ (as each xdist worker does: its heap, its imports) and "
        "run only the given paths",
    )
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "records.jsonl"
        env = {**os.environ, OUT_ENV: str(out)}
        paths = args.paths
        if args.as_worker:
            env[ONLY_ENV], paths = os.pathsep.join(args.paths), ["tests"]
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as `make test` runs it
        cmd = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "bench.suite_cpu"]
        cmd += ["--hypothesis-profile=ci", "-p", "no:cacheprovider", *paths, *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = [json.loads(ln) for ln in out.read_text().splitlines()] if out.exists() else []
    print(report(records, args.top))
    session = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
    print(f"session: {session:.2f} s CPU (pytest with collection and teardown, its children)")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
