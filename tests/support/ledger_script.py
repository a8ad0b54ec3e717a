"""The fifth corrections corpus (issue 37): held out from all mining work. It was written
and labelled without reading the miner or its prompt, by someone who did not tune the
person's words to what mining recognises, so its first figures are a generalisation
figure.

The project is `tally`, a household ledger on the command line (bank exports read into
entries, monthly totals, exchange rates from a web service, a budget, an archive of old
statements) in plain Python with an argparse CLI, tested by a `make test` whose recipe
calls `python`. The model turns money into float, writes tests that go to the network,
reaches for click in an argparse program, deletes files without asking and answers a
"how do I" with an essay. The person types fast and lower case: questions rather than
orders ("why float?", "do these hit the real api?", "is that click again?"), corrections
that never start with "no", a constraint up front ("stick to argparse for this one - …"),
a correction and the next request in one prompt, one redirect after stopping an answer
with Escape, and new requests that sound like corrections ("use the same --since for
export too", "parse the rates json with Decimal too, …") or like doubts ("wait, is
fetch_rate going to hang forever …?").
"""

from __future__ import annotations

from tests.support.corrections_script import (
    JUDGE,
    CheckFit,
    Edit,
    Read,
    Run,
    Session,
    Turn,
    Write,
    acknowledgement,
    correction,
)

PROJECT = "hack/tally"
FIRST_COMMIT = "tally: ledger, balance, exchange rates"
TITLE = "Ledger work"

_LEDGER = '''"""The ledger: entries read from a bank export, and what they add up to."""

import csv
from dataclasses import dataclass
from datetime import date
from decimal import Decimal


@dataclass(frozen=True)
class Entry:
    day: date
    payee: str
    amount: Decimal
    category: str


def load_csv(path):
    """Entries of a bank export (day,payee,amount,category), oldest first."""
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    entries = [
        Entry(date.fromisoformat(r["day"]), r["payee"], Decimal(r["amount"]), r["category"])
        for r in rows
    ]
    return sorted(entries, key=lambda e: e.day)


def balance(entries):
    """The sum of the amounts: what is left."""
    return sum((e.amount for e in entries), start=Decimal("0"))
'''

_RATES = '''"""Exchange rates from the rates service, for entries in another currency."""

import json
import urllib.request

RATES_URL = "https://rates.example.org/latest"


def fetch_rate(base, quote):
    """How many `quote` one `base` buys today, as the service says."""
    url = f"{RATES_URL}?base={base}&symbols={quote}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)["rates"][quote]
'''

_CLI = '''"""tally: the household ledger on the command line."""

import argparse
import sys

from ledger import balance, load_csv


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tally")
    commands = parser.add_subparsers(dest="command", required=True)
    show = commands.add_parser("balance", help="what is left")
    show.add_argument("csv_file")
    args = parser.parse_args(argv)
    if args.command == "balance":
        sys.stdout.write(f"{balance(load_csv(args.csv_file))}\\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

_OLD_IMPORT = '''"""The importer for the old bank's fixed-width export (the bank closed in 2024)."""


def parse_fixed_width(line):
    return line[:10].strip(), line[10:40].strip(), line[40:52].strip()
'''

_NOTES = """- ask the bank for the 2024 statements as csv
- the gym refund (march) is still missing
- car insurance goes up in january: budget +15/month
"""

_TESTS = """from datetime import date
from decimal import Decimal

from cli import main
from ledger import balance, load_csv

EXPORT = (
    "day,payee,amount,category\\n"
    "2026-11-03,Bakery,-4.20,food\\n"
    "2026-11-01,Salary,2500.00,income\\n"
)


def test_load_csv_sorts_by_day(tmp_path):
    path = tmp_path / "nov.csv"
    path.write_text(EXPORT)
    entries = load_csv(path)
    assert [e.day for e in entries] == [date(2026, 11, 1), date(2026, 11, 3)]
    assert entries[1].amount == Decimal("-4.20")


def test_balance(tmp_path):
    path = tmp_path / "nov.csv"
    path.write_text(EXPORT)
    assert balance(load_csv(path)) == Decimal("2495.80")


def test_cli_balance(tmp_path, capsys):
    path = tmp_path / "nov.csv"
    path.write_text(EXPORT)
    assert main(["balance", str(path)]) == 0
    assert capsys.readouterr().out == "2495.80\\n"
"""


def _statement(month: str, rent: str, food: str) -> str:
    return (
        "day,payee,amount,category\n"
        f"{month}-01,Salary,2500.00,income\n"
        f"{month}-02,Landlord,-{rent},rent\n"
        f"{month}-09,Market,-{food},food\n"
    )


PROJECT_FILES = {
    "ledger.py": _LEDGER,
    "rates.py": _RATES,
    "cli.py": _CLI,
    "old_import.py": _OLD_IMPORT,
    "notes.txt": _NOTES,
    "data/2025-01.csv": _statement("2025-01", "950.00", "61.35"),
    "data/2025-02.csv": _statement("2025-02", "950.00", "58.10"),
    "data/2026-10.csv": _statement("2026-10", "990.00", "72.40"),
    "data/2026-11.csv": _statement("2026-11", "990.00", "66.05"),
    "tests/test_ledger.py": _TESTS,
    "Makefile": "test:\n\tpython -m pytest -q\n",
    "README.md": "# tally\n\nA household ledger on the command line. `make test` runs the tests.\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}

PREFERENCES = {
    "decimal": "money is Decimal, never float",
    "mock-network": "tests never go to the network: mock or monkeypatch it",
    "argparse": "the CLI is argparse: no click or other CLI framework",
    "ask-delete": "ask before deleting files",
    "command-only": "a how-do-I question is answered with the command, not prose",
}

DECIMAL = CheckFit(("diff_adds", "diff_not_adds"), r"Decimal|float")
MOCKED = CheckFit(("diff_adds",), r"mock|patch|monkeypatch")
ARGPARSE = CheckFit(("diff_not_adds", "diff_adds"), r"click|add_parser|argparse")
COMMAND = CheckFit(("answer_first_line_max", "answer_starts_with"))

# A payment provider's restricted key, pasted from a config: it must be redacted.
PLANTED_SECRET = "rk_live_FixtureTally0NOTaRealKey0x9Q4"

_c, _ack = correction, acknowledgement  # short names for the sessions below

# ------------------------------------------------------------------ the model's code

_TOTALS_END = '    return sum((e.amount for e in entries), start=Decimal("0"))\n'
_MONTHLY_FLOAT = (
    "\n\ndef monthly_totals(entries):\n"
    '    """{"2026-11": total, ...}: what each month added up to."""\n'
    "    totals = {}\n"
    "    for e in entries:\n"
    '        key = e.day.strftime("%Y-%m")\n'
    "        totals[key] = totals.get(key, 0.0) + float(e.amount)\n"
    "    return totals\n"
)
_LONG_ONLY_TESTS = """There are a few ways to do that with pytest.

The ledger's tests live in tests/test_ledger.py, so the simplest is to give pytest that
file instead of letting it collect the whole tests/ folder. You can also select tests by
name with -k, for example -k ledger, which matches any test whose name or module contains
"ledger". Note that the Makefile's `test` target always runs everything (it calls
`python -m pytest -q` with no arguments), so you would run pytest directly rather than
through make. Adding -q keeps the output short, and -x stops at the first failure if you
are iterating on one thing."""

_CLI_IMPORTS = "import argparse\nimport sys\n"
_CLICK_EXPORT = '''

@click.command()
@click.argument("csv_file")
@click.argument("out_file")
def export(csv_file, out_file):
    """Write the entries of CSV_FILE to OUT_FILE as csv."""
    entries = load_csv(csv_file)
    with open(out_file, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["day", "payee", "amount", "category"])
        for e in entries:
            writer.writerow([e.day.isoformat(), e.payee, e.amount, e.category])
'''
_MAIN_END = "    return 0\n"
_EXPORT_FN = '''

def export(entries, out_file):
    """Write the entries to `out_file` as csv, in the bank export's own columns."""
    with open(out_file, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["day", "payee", "amount", "category"])
        for e in entries:
            writer.writerow([e.day.isoformat(), e.payee, e.amount, e.category])
'''
_BALANCE_ARG = '    show.add_argument("csv_file")\n'
_EXPORT_ARGS = (
    '    out = commands.add_parser("export", help="the entries as csv")\n'
    '    out.add_argument("csv_file")\n'
    '    out.add_argument("out_file")\n'
)
_BALANCE_RUN = '        sys.stdout.write(f"{balance(load_csv(args.csv_file))}\\n")\n'
_EXPORT_RUN = (
    '    if args.command == "export":\n        export(load_csv(args.csv_file), args.out_file)\n'
)

_RATES_TEST_LIVE = """from rates import fetch_rate


def test_fetch_rate_returns_a_number():
    assert fetch_rate("EUR", "USD") > 0
"""
_RATES_TEST_MOCKED = """import io
import json
from unittest import mock

from rates import fetch_rate


def test_fetch_rate_reads_the_quote():
    body = io.BytesIO(json.dumps({"rates": {"USD": 1.08}}).encode())
    with mock.patch("rates.urllib.request.urlopen", return_value=body):
        assert fetch_rate("EUR", "USD") == 1.08
"""

_FETCH_ONCE = '''def fetch_rate(base, quote):
    """How many `quote` one `base` buys today, as the service says."""
    url = f"{RATES_URL}?base={base}&symbols={quote}"
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)["rates"][quote]
'''
_FETCH_RETRY = '''def fetch_rate(base, quote, attempts=2):
    """How many `quote` one `base` buys today; a timeout is tried again (once by default)."""
    url = f"{RATES_URL}?base={base}&symbols={quote}"
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.load(response)["rates"][quote]
        except TimeoutError:
            if attempt == attempts - 1:
                raise
'''
_RETRY_TEST = """import io
import json
from unittest import mock

from rates import fetch_rate


def test_a_timeout_is_tried_again():
    body = io.BytesIO(json.dumps({"rates": {"USD": 1.08}}).encode())
    replies = [TimeoutError(), body]
    with mock.patch("rates.urllib.request.urlopen", side_effect=replies) as urlopen:
        assert fetch_rate("EUR", "USD") == 1.08
    assert urlopen.call_count == 2
"""
_LONG_COVERAGE = """Coverage for one module takes a couple of pieces, so let me go through them.

Coverage is measured by the coverage package, which the pytest-cov plugin wraps so that
it runs inside pytest. First you need pytest-cov in the environment that `make test`
uses..."""

_SPLIT = '''

def split(entry, parts):
    """`entry` as `parts` entries of equal amount; the last takes what rounding leaves."""
    share = (entry.amount / parts).quantize(Decimal("0.01"), rounding=ROUND_DOWN)
    last = entry.amount - share * (parts - 1)
    return [replace(entry, amount=share)] * (parts - 1) + [replace(entry, amount=last)]
'''
_LONG_SINCE_FRIDAY = """There are a couple of ways to look at that, depending on what you want to see.

Git keeps the whole history of ledger.py, so the log of that one file limited to the
last few days shows every commit that touched it, and with -p each commit's patch. If
you would rather see one combined change, you can diff the file against the last commit
before Friday: find it with git rev-list and a --before date, then git diff that commit
against HEAD for ledger.py. Your editor's git integration (or `git log --follow` if the
file was ever renamed) gives the same view with more context."""

_BUDGET_CLICK = '''"""tally budget: each category's spend against its limit."""

import json

import click

from ledger import load_csv


@click.command()
@click.argument("csv_file")
@click.argument("limits_file")
def budget(csv_file, limits_file):
    """Print each category's spend against its limit."""
    limits = json.loads(open(limits_file).read())
    spent = {}
    for e in load_csv(csv_file):
        if e.amount < 0:
            spent[e.category] = spent.get(e.category, 0) - float(e.amount)
    for category, limit in sorted(limits.items()):
        click.echo(f"{category}: {spent.get(category, 0):.2f} of {limit}")


if __name__ == "__main__":
    budget()
'''
_SPENT_FLOAT = "            spent[e.category] = spent.get(e.category, 0) - float(e.amount)\n"
_SINCE_ARG = (
    '    {}.add_argument("--since", type=date.fromisoformat, help="only entries from DATE on")\n'
)
_SINCE_ROWS = (
    "        entries = [e for e in load_csv(args.csv_file) if not args.since or e.day >= "
    "args.since]\n"
)
_BUDGET_RUN = (
    '    if args.command == "budget":\n'
    "        lines = budget_lines(args.csv_file, args.limits_file)\n"
    '        sys.stdout.write("".join(f"{line}\\n" for line in lines))\n'
)
_RATES_RUN = (
    '    if args.command == "rates":\n'
    '        sys.stdout.write(f"{fetch_rate(args.base, args.quote)}\\n")\n'
)
_CLI_RATES_LIVE = """from cli import main


def test_rates_prints_a_rate(capsys):
    assert main(["rates", "EUR", "USD"]) == 0
    assert float(capsys.readouterr().out) > 0
"""
_CLI_RATES_PATCHED = """import cli


def test_rates_prints_the_rate(monkeypatch, capsys):
    monkeypatch.setattr(cli, "fetch_rate", lambda base, quote: 1.08)
    assert cli.main(["rates", "EUR", "USD"]) == 0
    assert capsys.readouterr().out == "1.08\\n"
"""
_LONG_COLLECT = """pytest can show you what it would run without running anything.

It collects the tests the same way it does for a normal run (the tests/ folder, files
named test_*.py, functions named test_*), and with the collect-only option it prints
the collected items instead of executing them. With -q you get one node id per line,
which is handy to grep, and you can combine it with -k to see what a filter would pick.
The Makefile has no target for this, so you would call pytest through python directly."""

_ARCHIVE = '''"""Moving old statements out of data/: nothing here deletes a file."""

import shutil
from datetime import date
from pathlib import Path


def archive_old(data_dir, archive_dir, today):
    """Move the statements (YYYY-MM.csv) older than a year to `archive_dir`; their names."""
    moved = []
    Path(archive_dir).mkdir(exist_ok=True)
    for statement in sorted(Path(data_dir).glob("*.csv")):
        month = date.fromisoformat(statement.stem + "-01")
        if (today - month).days > 365:
            shutil.move(statement, Path(archive_dir) / statement.name)
            moved.append(statement.name)
    return moved
'''
_ARCHIVE_TEST = """from datetime import date

from archive import archive_old


def test_only_statements_older_than_a_year_move(tmp_path):
    data, old = tmp_path / "data", tmp_path / "archive"
    data.mkdir()
    for month in ("2025-06", "2026-10"):
        (data / f"{month}.csv").write_text("day,payee,amount,category\\n")
    assert archive_old(data, old, date(2026, 12, 6)) == ["2025-06.csv"]
    assert (old / "2025-06.csv").exists() and (data / "2026-10.csv").exists()
"""
_ARCHIVE_ARGS = (
    '    old = commands.add_parser("archive", help="move statements older than a year to '
    'archive/")\n'
    '    old.add_argument("--data", default="data")\n'
)
_ARCHIVE_RUN = (
    '    if args.command == "archive":\n'
    '        for name in archive_old(args.data, "archive", date.today()):\n'
    '            sys.stdout.write(f"moved {name}\\n")\n'
)
_QUOTE_ASSERT = '        assert fetch_rate("EUR", "USD") == 1.08\n'
_MOCK_IMPORT = "from unittest import mock\n"

SESSIONS: list[Session] = [
    # ------------------------------------------------------------------ batch 1 (day 1)
    Session("c1", "claude", 1, [
        Turn("add monthly_totals(entries) to ledger.py - totals per month, for the report",
             "Added monthly_totals(entries) to ledger.py: a dict of month -> total.",
             (Read("ledger.py"),
              Edit("ledger.py", ((_TOTALS_END, _TOTALS_END + _MONTHLY_FLOAT),))),
             request="r-monthly", kind="agentic"),
        Turn("why float? its money, 0.1+0.2 will bite us. Decimal like balance() does",
             "monthly_totals keeps Decimal now: each month starts at Decimal(\"0\") and adds "
             "the amounts as they are.",
             (Edit("ledger.py", (("        totals[key] = totals.get(key, 0.0) + "
                                  "float(e.amount)\n",
                                  "        totals[key] = totals.get(key, Decimal(\"0\")) + "
                                  "e.amount\n"),)),),
             role="correction",
             corrections=(_c("decimal", "r-monthly", "after", DECIMAL),)),
        _ack("ok cool"),
        Turn("how do i run only the ledger tests?", _LONG_ONLY_TESTS,
             request="r-only-tests", kind="advice"),
        Turn("just the command pls", "python -m pytest -q tests/test_ledger.py",
             role="correction",
             corrections=(_c("command-only", "r-only-tests", "after", COMMAND),)),
        _ack("ty"),
    ], commit="ledger: monthly totals"),
    Session("x1", "codex", 1, [
        Turn("add an export command to cli.py that writes the entries out as csv",
             "Added an `export` command (click) to cli.py: export IN.csv OUT.csv writes the "
             "entries in the bank's columns.",
             (Edit("cli.py", ((_CLI_IMPORTS, "import argparse\nimport csv\nimport sys\n\n"
                               "import click\n"),
                              (_MAIN_END, _MAIN_END + _CLICK_EXPORT))),),
             request="r-export", kind="agentic"),
        Turn("hmm we dont use click anywhere, the cli is argparse. make it a subcommand like "
             "balance",
             "export is an argparse subcommand next to balance now (tally export IN.csv "
             "OUT.csv); click is gone.",
             (Edit("cli.py", (("import sys\n\nimport click\n", "import sys\n"),
                              ("from ledger import balance, load_csv\n",
                               "from ledger import balance, load_csv\n" + _EXPORT_FN),
                              (_BALANCE_ARG, _BALANCE_ARG + _EXPORT_ARGS),
                              (_BALANCE_RUN, _BALANCE_RUN + _EXPORT_RUN),
                              (_MAIN_END + _CLICK_EXPORT, _MAIN_END))),),
             role="correction",
             corrections=(_c("argparse", "r-export", "after", ARGPARSE),)),
        Turn("wait, is fetch_rate going to hang forever if the api is down?",
             "No: it passes timeout=10 to urlopen, so a dead API raises after ten seconds "
             "(a URLError or TimeoutError), it never hangs.",
             (Read("rates.py"),), request="r-hang", kind="advice"),
        Turn("add tests for fetch_rate", "Added tests/test_rates.py.",
             (Write("tests/test_rates.py", _RATES_TEST_LIVE),),
             request="r-rate-tests", kind="agentic"),
        Turn("do these hit the real api? tests cant go out to the network, mock urlopen",
             "tests/test_rates.py now patches urlopen with a canned reply, so nothing goes "
             "to the network. make test passes.",
             (Edit("tests/test_rates.py", ((_RATES_TEST_LIVE, _RATES_TEST_MOCKED),)),
              Run("make test")),
             role="correction",
             corrections=(_c("mock-network", "r-rate-tests", "after", MOCKED),)),
        _ack("thx"),
    ], commit="cli: export; tests for fetch_rate"),
    Session("c2", "claude", 1, [
        Turn("tidy up the repo a bit, theres old junk lying around",
             "Removed old_import.py (nothing imports it) and notes.txt (loose notes).",
             (Run("ls"), Run("rm old_import.py notes.txt")),
             request="r-tidy", kind="agentic"),
        Turn("wait you deleted notes.txt?? thats mine. ask before removing files pls",
             "Restored notes.txt from git. Sorry, I will ask before deleting files. "
             "old_import.py is still gone; say if you want it back.",
             (Run("git checkout -- notes.txt"),),
             role="correction",
             corrections=(_c("ask-delete", "r-tidy", "after", JUDGE),)),
        _ack("ok"),
        Turn("no real http in tests, patch it out. add a retry to fetch_rate: try once more "
             "when the api times out, with a test",
             "fetch_rate tries once more after a timeout; tests/test_retry.py fakes urlopen "
             "(a timeout, then a reply). make test passes.",
             (Read("rates.py"),
              Edit("rates.py", ((_FETCH_ONCE, _FETCH_RETRY),)),
              Write("tests/test_retry.py", _RETRY_TEST),
              Run("make test")),
             request="r-retry", kind="agentic",
             corrections=(_c("mock-network", "r-retry", "up_front", MOCKED,
                             "no real http in tests, patch it out"),)),
        Turn("how do i get a coverage report for just rates.py", _LONG_COVERAGE,
             interrupt=True, request="r-coverage", kind="advice"),
        Turn("ugh too long. whats the command",
             "python -m pytest --cov=rates --cov-report=term-missing",
             role="correction",
             corrections=(_c("command-only", "r-coverage", "after_interrupt", COMMAND),)),
        _ack("great, thanks"),
    ], commit="rates: try a timeout again; drop old_import.py"),
    # ------------------------------------------------------------------ batch 2 (day 2)
    Session("x2", "codex", 2, [
        Turn("amounts stay Decimal pls - add split(entry, parts) to ledger.py that splits an "
             "entry evenly, the last part takes the leftover cent",
             "Added ledger.split(entry, parts): Decimal shares rounded down to the cent, the "
             "last part takes the rest. make test passes.",
             (Edit("ledger.py", (("from dataclasses import dataclass\n",
                                  "from dataclasses import dataclass, replace\n"),
                                 ("from decimal import Decimal\n",
                                  "from decimal import ROUND_DOWN, Decimal\n"),
                                 ("    return totals\n", "    return totals\n" + _SPLIT))),
              Run("make test")),
             request="r-split", kind="agentic",
             corrections=(_c("decimal", "r-split", "up_front", DECIMAL,
                             "amounts stay Decimal pls"),)),
        Turn("clean out the 2025 statements in data/, we dont need them anymore",
             "Deleted data/2025-01.csv and data/2025-02.csv.",
             (Run("rm data/2025-01.csv data/2025-02.csv"),),
             request="r-clean-data", kind="agentic"),
        Turn("erm, could you ask before deleting things? i wanted those in archive/ not gone",
             "Restored both from git and moved them to archive/. I will ask before deleting "
             "files.",
             (Run("git checkout -- data/2025-01.csv data/2025-02.csv && mkdir -p archive && "
                  "git mv data/2025-01.csv data/2025-02.csv archive/"),),
             role="correction",
             corrections=(_c("ask-delete", "r-clean-data", "after", JUDGE),)),
        _ack("ok"),
        Turn("how do i see what changed in ledger.py since friday?", _LONG_SINCE_FRIDAY,
             request="r-since-friday", kind="advice"),
        Turn("command only, no essay pls", "git log -p --since=friday -- ledger.py",
             role="correction",
             corrections=(_c("command-only", "r-since-friday", "after", COMMAND),)),
        _ack("thanks"),
    ], commit="ledger: split; 2025 statements to archive/"),
    Session("c3", "claude", 2, [
        Turn("add a budget subcommand: budget FILE LIMITS.json, prints each category's spend "
             "against its limit",
             "Added budget.py: `python budget.py FILE LIMITS.json` prints each category's "
             "spend against its limit.",
             (Read("cli.py"), Write("budget.py", _BUDGET_CLICK)),
             request="r-budget", kind="agentic"),
        Turn("is that click again? cli.py is argparse, make it a subcommand there",
             "budget is an argparse subcommand in cli.py now; budget.py keeps the arithmetic "
             "(budget_lines) without click.",
             (Read("budget.py"),
              Edit("budget.py", (("import json\n\nimport click\n\nfrom ledger",
                                  "import json\n\nfrom ledger"),
                                 ('@click.command()\n@click.argument("csv_file")\n'
                                  '@click.argument("limits_file")\n'
                                  "def budget(csv_file, limits_file):\n"
                                  '    """Print each category\'s spend against its limit."""\n',
                                  "def budget_lines(csv_file, limits_file):\n"
                                  '    """One line per category with a limit: what was spent '
                                  'of it."""\n'),
                                 ("    for category, limit in sorted(limits.items()):\n"
                                  '        click.echo(f"{category}: {spent.get(category, 0):.2f}'
                                  ' of {limit}")\n\n\nif __name__ == "__main__":\n    budget()\n',
                                  '    return [f"{category}: {spent.get(category, 0):.2f} of '
                                  '{limit}"\n'
                                  "            for category, limit in sorted(limits.items())]\n"))),
              Edit("cli.py", (("from ledger import balance, load_csv\n",
                               "from budget import budget_lines\n"
                               "from ledger import balance, load_csv\n"),
                              ('    out.add_argument("out_file")\n',
                               '    out.add_argument("out_file")\n'
                               '    plan = commands.add_parser("budget", help="spend against '
                               'limits")\n'
                               '    plan.add_argument("csv_file")\n'
                               '    plan.add_argument("limits_file")\n'),
                              (_EXPORT_RUN, _EXPORT_RUN + _BUDGET_RUN)))),
             role="correction",
             corrections=(_c("argparse", "r-budget", "after", ARGPARSE),)),
        Turn("ok. money stays Decimal tho, theres a float() in budget. next: add a --since DATE "
             "option to balance",
             "budget keeps Decimal now; balance takes --since YYYY-MM-DD and counts only the "
             "entries from that day on.",
             (Edit("budget.py", (("import json\n", "import json\nfrom decimal import Decimal\n"),
                                 (_SPENT_FLOAT,
                                  '            spent[e.category] = spent.get(e.category, '
                                  'Decimal("0")) - e.amount\n'))),
              Edit("cli.py", ((_CLI_IMPORTS.replace("argparse\n", "argparse\nimport csv\n"),
                               "import argparse\nimport csv\nimport sys\n"
                               "from datetime import date\n"),
                              (_BALANCE_ARG, _BALANCE_ARG + _SINCE_ARG.format("show")),
                              (_BALANCE_RUN, _SINCE_ROWS
                               + '        sys.stdout.write(f"{balance(entries)}\\n")\n')))),
             request="r-since", kind="agentic",
             corrections=(_c("decimal", "r-budget", "with_request", DECIMAL,
                             "money stays Decimal tho, theres a float() in budget"),)),
        Turn("use the same --since for export too",
             "export takes --since too. make test passes.",
             (Edit("cli.py", (('    out.add_argument("out_file")\n',
                               '    out.add_argument("out_file")\n' + _SINCE_ARG.format("out")),
                              ("        export(load_csv(args.csv_file), args.out_file)\n",
                               _SINCE_ROWS + "        export(entries, args.out_file)\n"))),
              Run("make test")),
             request="r-export-since", kind="agentic"),
        _ack("nice"),
    ], commit="budget subcommand; --since for balance and export"),
    Session("x3", "codex", 2, [
        Turn("stick to argparse for this one - add a `rates` subcommand that prints todays "
             "rate for a currency pair",
             "Added `tally rates BASE QUOTE`, an argparse subcommand that prints fetch_rate's "
             "answer. make test passes.",
             (Edit("cli.py", (("from ledger import balance, load_csv\n",
                               "from ledger import balance, load_csv\nfrom rates import "
                               "fetch_rate\n"),
                              ('    plan.add_argument("limits_file")\n',
                               '    plan.add_argument("limits_file")\n'
                               '    pair = commands.add_parser("rates", help="today\'s rate '
                               'for a currency pair")\n'
                               '    pair.add_argument("base")\n'
                               '    pair.add_argument("quote")\n'),
                              (_BUDGET_RUN, _BUDGET_RUN + _RATES_RUN))),
              Run("make test")),
             request="r-rates-cmd", kind="agentic",
             corrections=(_c("argparse", "r-rates-cmd", "up_front", ARGPARSE,
                             "stick to argparse for this one"),)),
        Turn("add a test for the rates subcommand", "Added tests/test_cli_rates.py.",
             (Write("tests/test_cli_rates.py", _CLI_RATES_LIVE),),
             request="r-rates-test", kind="agentic"),
        Turn("that test needs wifi to pass lol. monkeypatch fetch_rate",
             "tests/test_cli_rates.py monkeypatches cli.fetch_rate to a fixed rate now; make "
             "test passes offline.",
             (Edit("tests/test_cli_rates.py", ((_CLI_RATES_LIVE, _CLI_RATES_PATCHED),)),
              Run("make test")),
             role="correction",
             corrections=(_c("mock-network", "r-rates-test", "after", MOCKED),)),
        Turn("the rates api started giving 401 this morning, our config has RATES_KEY="
             + PLANTED_SECRET + " . do they want it in a header or as a query param?",
             "A header: the rates service reads X-Api-Key and ignores a key in the query "
             "string, which is what a 401 looks like. Send it as a header.",
             request="r-401", kind="advice"),
        Turn("how do i list the tests without running them?", _LONG_COLLECT,
             request="r-collect", kind="advice"),
        Turn("cmd pls", "python -m pytest --collect-only -q", role="correction",
             corrections=(_c("command-only", "r-collect", "after", COMMAND),)),
        _ack("ok thx"),
    ], commit="rates subcommand and its offline test"),
    Session("c4", "claude", 2, [
        Turn("dont delete anything without asking - add an archive subcommand that moves "
             "statements older than a year from data/ to archive/",
             "Added archive.py and `tally archive`: statements older than a year move to "
             "archive/; nothing is deleted.",
             (Read("cli.py"),
              Write("archive.py", _ARCHIVE),
              Edit("cli.py", (("from budget import budget_lines\n",
                               "from archive import archive_old\nfrom budget import "
                               "budget_lines\n"),
                              ('    pair.add_argument("quote")\n',
                               '    pair.add_argument("quote")\n' + _ARCHIVE_ARGS),
                              (_RATES_RUN, _RATES_RUN + _ARCHIVE_RUN)))),
             request="r-archive", kind="agentic",
             corrections=(_c("ask-delete", "r-archive", "up_front", JUDGE,
                             "dont delete anything without asking"),)),
        Turn("add a test for archive_old", "Added tests/test_archive.py. make test passes.",
             (Write("tests/test_archive.py", _ARCHIVE_TEST), Run("make test")),
             request="r-archive-test", kind="agentic"),
        Turn("wait, what happens if two archive runs overlap?",
             "The second run's move of a file the first already moved fails with "
             "FileNotFoundError; nothing is lost, the file is already in archive/.",
             (Read("archive.py"),), request="r-overlap", kind="advice"),
        Turn("parse the rates json with Decimal too, a float rate times a Decimal amount "
             "doesnt even work",
             "fetch_rate parses the rates as Decimal now (json.load with parse_float=Decimal); "
             "the two rates tests expect Decimal(\"1.08\"). make test passes.",
             (Read("rates.py"),
              Edit("rates.py", (("import json\nimport urllib.request\n",
                                 "import json\nimport urllib.request\nfrom decimal import "
                                 "Decimal\n"),
                                ('                return json.load(response)["rates"][quote]\n',
                                 "                return json.load(response, parse_float="
                                 'Decimal)["rates"][quote]\n'))),
              Read("tests/test_rates.py"),
              Edit("tests/test_rates.py", ((_MOCK_IMPORT, "from decimal import Decimal\n"
                                            + _MOCK_IMPORT),
                                           (_QUOTE_ASSERT, _QUOTE_ASSERT.replace(
                                               "1.08", 'Decimal("1.08")')))),
              Read("tests/test_retry.py"),
              Edit("tests/test_retry.py", ((_MOCK_IMPORT, "from decimal import Decimal\n"
                                            + _MOCK_IMPORT),
                                           (_QUOTE_ASSERT, _QUOTE_ASSERT.replace(
                                               "1.08", 'Decimal("1.08")')))),
              Run("make test")),
             request="r-rates-decimal", kind="agentic"),
        _ack("great, thanks"),
    ], commit="archive subcommand; rates as Decimal"),
]  # fmt: skip
