"""What happens in the corrections corpus (issue 37): the project a person works in, the
sessions they type in Claude Code and Codex, what the scripted model does in each turn
(it really edits files and runs commands through the agent's own tools), and the ground
truth about every prompt: which request each correction corrects, which recurring
preference it belongs to, and which check would test it without a judge.

The model is a weak but willing one: it prints instead of logging, forgets to run the
tests, answers at length, drops the old name of what it renames and reaches for a new
dependency. The person corrects it the way people do: after the answer ("did you run the
tests?"), up front as a constraint ("standard library only: ..."), and once after
stopping a long answer with Escape. tests/support/corrections_corpus.py drives the real
CLIs through this script; tests/sleep/test_corrections_corpus.py scores Sleep on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# ---------------------------------------------------------------------------- the project

PROJECT = "src/billing-svc"
FIRST_COMMIT = "billing-svc: totals, late fees, report"
TITLE = "Billing work"  # what the model answers a CLI's title call with

_BILLING = '''"""Invoice arithmetic for the billing service."""

from decimal import Decimal


def parse_amount(text):
    """'12.50' -> Decimal('12.50'); a negative amount is a ValueError."""
    value = Decimal(text.strip())
    if value < 0:
        raise ValueError(f"negative amount: {text}")
    return value


def format_total(amount):
    return f"{amount:.2f} EUR"


def late_fee(amount, days_late):
    """One percent of the amount per day late, simple (not compounded)."""
    if days_late <= 0:
        return Decimal("0")
    return (amount * Decimal("0.01") * days_late).quantize(Decimal("0.01"))
'''

_PIPELINE = '''"""Cleaning raw invoice rows before they are billed."""

from billing import parse_amount


def clean(rows):
    """Rows whose amount is missing (None) are dropped; the rest get a Decimal amount."""
    out = []
    for row in rows:
        if row.get("amount") is None:
            continue
        out.append(dict(row, amount=parse_amount(row["amount"])))
    return out
'''

_CLI = '''"""billing FILE.csv: the total of an invoice export."""

import argparse
import csv
import sys

from billing import format_total, parse_amount


def main(argv=None):
    parser = argparse.ArgumentParser(prog="billing")
    parser.add_argument("csv_file")
    args = parser.parse_args(argv)
    with open(args.csv_file, newline="") as handle:
        rows = list(csv.DictReader(handle))
    total = sum((parse_amount(r["amount"]) for r in rows), start=parse_amount("0"))
    sys.stdout.write(format_total(total) + "\\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

_REPORT = '''"""The invoice table shown to the finance team."""

from billing import format_total


def render(rows):
    lines = []
    for row in rows:
        lines.append(f"{row['id']:<12}{format_total(row['amount'])}")
    return "\\n".join(lines)
'''

_TESTS = """from decimal import Decimal

import pytest

from billing import format_total, late_fee, parse_amount
from pipeline import clean
from report import render


def test_parse_amount():
    assert parse_amount(" 12.50 ") == Decimal("12.50")


def test_negative_amount_is_refused():
    with pytest.raises(ValueError):
        parse_amount("-1")


def test_late_fee_is_simple_interest():
    assert late_fee(Decimal("100"), 3) == Decimal("3.00")


def test_clean_drops_rows_without_amount():
    rows = [{"id": "a", "amount": None}, {"id": "b", "amount": "2"}]
    assert clean(rows) == [{"id": "b", "amount": Decimal("2")}]


def test_render():
    assert render([{"id": "inv-1", "amount": Decimal("5")}]) == "inv-1       " + format_total(5)
"""

PROJECT_FILES = {
    "billing.py": _BILLING,
    "pipeline.py": _PIPELINE,
    "cli.py": _CLI,
    "report.py": _REPORT,
    "tests/test_billing.py": _TESTS,
    # The person's own check: a recipe that calls `python` (issue 37: it must run in the
    # replay jail as it runs here).
    "Makefile": "test:\n\tpython -m pytest -q\n",
    "README.md": "# billing-svc\n\nInvoice totals for the finance team. `make test` runs the tests.\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}

# ---------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Read:
    path: str


@dataclass(frozen=True)
class Write:
    """A new file."""

    path: str
    content: str


@dataclass(frozen=True)
class Edit:
    """Replacements in one file, each old text found exactly once."""

    path: str
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Run:
    command: str


@dataclass(frozen=True)
class Delegate:
    """Claude Code's sub-agent tool; the sub-agent's own turn is `SubAgentTurn`."""

    description: str
    prompt: str


Action = Read | Write | Edit | Run | Delegate

# ---------------------------------------------------------------------------- labels

Kind = Literal["agentic", "advice", "external", "redacted"]
# with_request: said in the same prompt as a new request ("thx. and type hints from now on
# pls. next: …"), correcting the request before it
Form = Literal["after", "up_front", "after_interrupt", "with_request"]
Role = Literal["request", "correction", "acknowledgement", "fragment"]


@dataclass(frozen=True)
class CheckFit:
    """The check that fits a correction: a kind the replay applies without a judge (named
    as issue 37 names them) and a pattern its value must match; or `judge`."""

    kinds: tuple[str, ...]
    value: str = ""  # a regular expression the check's value matches ("" = any)

    @property
    def mechanical(self) -> bool:
        return self.kinds != ("judge",)


NOT_PRINT = CheckFit(("diff_not_adds",), r"print")
RAN_TESTS = CheckFit(("ran",), r"make test|pytest")
SHORT = CheckFit(("answer_first_line_max", "answer_starts_with"))
YES_NO = CheckFit(("answer_starts_with", "answer_first_line_max"), r"(?i)yes|no|\d")
NO_NEW_IMPORT = CheckFit(("no_new_import", "diff_no_new_import", "adds_no_new_import"))
JUDGE = CheckFit(("judge",))


@dataclass(frozen=True)
class Correction:
    preference: str
    corrects: str  # the request id it corrects
    form: Form
    fit: CheckFit
    phrase: str = ""  # up front or with a request: the correction's words inside the prompt


@dataclass
class Turn:
    prompt: str
    answer: str  # the model's last words in the turn
    actions: tuple[Action, ...] = ()
    role: Role = "request"
    request: str = ""  # request id (role request)
    kind: Kind | None = None  # the kind a request should be mined as
    corrections: tuple[Correction, ...] = ()  # a correction turn's, or a request's up-front ones
    interrupt: bool = False  # the person presses Escape while the model is still thinking


@dataclass
class Session:
    key: str
    agent: Literal["claude", "codex"]
    batch: int
    turns: list[Turn]
    commit: str | None = None  # the person commits the session's work after it, with this message
    sub_agent: list[Turn] = field(default_factory=list)


PREFERENCES = {
    "logging": "use the logging module, not print",
    "run-tests": "run the tests before saying it is done",
    "short": "short answers: yes/no or one line",
    "keep-api": "keep the public API (old names keep working)",
    "stdlib": "standard library only, no new dependencies",
}

# A fake key, shaped like an Anthropic API key, pasted in a log: the harvest must redact it.
PLANTED_SECRET = "sk-ant-api03-FIXTUREfake0KEY0only0for0tests0NEVER0valid0AbCdEf123456"
SURVEY_PROMPT = "Survey the Python modules of this project and report one line per module."

_LONG_LATE_FEES = """Here is how late fees work in billing.py, step by step:

1. late_fee(amount, days_late) is called once per invoice.
2. If days_late is zero or negative it returns Decimal("0") at once.
3. Otherwise it multiplies the amount by 0.01, then by the number of days.
4. The product is quantized to cents with Decimal.quantize.
5. Nothing feeds a previous day's fee back into the next day's base.
6. total_due adds each invoice's fee to its amount and sums them.
7. There is no cap, so a very late invoice keeps growing linearly.
8. Rounding happens once, at the end, not per day.

So the fee grows by the same amount every day."""

_LONG_CREDENTIAL = """Both work; the trade-offs:

- A fine-grained personal access token can be limited to one repository and to read-only
  contents, but it belongs to a person: it stops working when they leave, and it expires.
- A deploy key is an SSH key attached to the submodule's repository itself, read-only by
  default, not tied to anyone's account and scoped to exactly that one repository.
- For CI that only clones, the deploy key is the usual choice; store the private half as
  a CI secret and add it with ssh-agent before `git submodule update`.
- If several private repositories are needed, a GitHub App token scales better than one
  deploy key per repository."""

_LONG_LOCALE = """format_total is a one-liner in billing.py:

    def format_total(amount):
        return f"{amount:.2f} EUR"

An f-string with the .2f format spec ignores the process locale: the decimal separator
is always a dot, there is no thousands separator, and the currency suffix is the fixed
string EUR. locale.format_string would be needed for a locale-aware result, and the
tests compare against the dot form."""

_RATES = '''"""Exchange rates from the finance team's endpoint."""

import json
import urllib.request


def fetch_rates(url, timeout=10):
    """The rates document at `url`, parsed: {"EUR": 1.0, "USD": 1.08, ...}."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)
'''

_FORMATTING = '''"""How amounts are shown."""


def format_total(amount):
    return f"{amount:.2f} EUR"
'''

_PARSED_ROW = '        out.append(dict(row, amount=parse_amount(row["amount"])))\n'


def correction(pref: str, corrects: str, form: Form, fit: CheckFit, phrase: str = "") -> Correction:
    return Correction(pref, corrects, form, fit, phrase)


def acknowledgement(text: str) -> Turn:
    return Turn(text, "Glad to help.", role="acknowledgement")


_c, _ack = correction, acknowledgement  # short names for the sessions below


SESSIONS: list[Session] = [
    # ------------------------------------------------------------------ batch 1 (day 1)
    Session("c1", "claude", 1, [
        Turn("add a --verbose flag to cli.py that reports how many rows were read",
             "Added --verbose using print(). Note: the row count is printed even without "
             "--verbose for now.",
             (Read("cli.py"),
              Edit("cli.py", (('    parser.add_argument("csv_file")\n',
                               '    parser.add_argument("csv_file")\n'
                               '    parser.add_argument("--verbose", action="store_true")\n'),
                              ('        rows = list(csv.DictReader(handle))\n',
                               '        rows = list(csv.DictReader(handle))\n'
                               '    print(f"read {len(rows)} rows")\n')))),
             request="r-verbose", kind="agentic"),
        Turn("fix it", "Fixed: the row count is printed to stderr, and only with --verbose.",
             (Edit("cli.py", (('    print(f"read {len(rows)} rows")\n',
                               '    if args.verbose:\n'
                               '        print(f"read {len(rows)} rows", file=sys.stderr)\n'),)),),
             role="fragment"),
        Turn("no, use logging instead of print",
             "Switched to logging: --verbose sets the level to INFO and the row count is "
             "logged.",
             (Edit("cli.py", (("import csv\nimport sys\n", "import csv\nimport logging\nimport sys\n"),
                              ('    if args.verbose:\n'
                               '        print(f"read {len(rows)} rows", file=sys.stderr)\n',
                               '    logging.basicConfig(level=logging.INFO if args.verbose '
                               'else logging.WARNING)\n'
                               '    logging.getLogger("billing").info("read %d rows", len(rows))\n'))),),
             role="correction", corrections=(_c("logging", "r-verbose", "after", NOT_PRINT),)),
        _ack("thanks"),
        Turn("does parse_amount accept negative numbers?",
             "No. parse_amount raises ValueError for a negative amount.",
             (Read("billing.py"),), request="r-negative", kind="advice"),
    ], commit="cli: --verbose logs the row count"),
    Session("c2", "claude", 1, [
        Turn("add a total_due(invoices) helper to billing.py that sums each amount plus its "
             "late fee",
             "Added total_due(invoices) to billing.py.",
             (Read("billing.py"),
              Edit("billing.py", (('    return (amount * Decimal("0.01") * days_late)'
                                   '.quantize(Decimal("0.01"))\n',
                                   '    return (amount * Decimal("0.01") * days_late)'
                                   '.quantize(Decimal("0.01"))\n\n\n'
                                   'def total_due(invoices):\n'
                                   '    """The sum of each invoice\'s amount plus its late fee."""\n'
                                   '    return sum(\n'
                                   '        (i["amount"] + late_fee(i["amount"], i.get("days_late", 0))'
                                   ' for i in invoices),\n'
                                   '        start=Decimal("0"),\n'
                                   '    )\n'),))),
             request="r-total-due", kind="agentic"),
        Turn("did you run the tests?", "I had not. Now I have: make test passes.",
             (Run("make test"),), role="correction",
             corrections=(_c("run-tests", "r-total-due", "after", RAN_TESTS),)),
        _ack("ok"),
        Turn("are late fees compounded daily?", _LONG_LATE_FEES,
             request="r-compounded", kind="advice"),
        Turn("that's a lot to read — just yes or no?", "No.", role="correction",
             corrections=(_c("short", "r-compounded", "after", YES_NO),)),
    ], commit="billing: total_due"),
    Session("x1", "codex", 1, [
        Turn("rename parse_amount to parse_money across the project",
             "Renamed parse_amount to parse_money in billing.py and cli.py.",
             (Edit("billing.py", (("def parse_amount(text):\n", "def parse_money(text):\n"),)),
              Edit("cli.py", (("from billing import format_total, parse_amount\n",
                               "from billing import format_total, parse_money\n"),
                              ('    total = sum((parse_amount(r["amount"]) for r in rows), '
                               'start=parse_amount("0"))\n',
                               '    total = sum((parse_money(r["amount"]) for r in rows), '
                               'start=parse_money("0"))\n')))),
             request="r-rename", kind="agentic"),
        Turn("you dropped the old function, callers still use it",
             "Kept parse_amount as an alias of parse_money; make test passes.",
             (Edit("billing.py", (("    return value\n",
                                   "    return value\n\n\n"
                                   "parse_amount = parse_money  # the old name: pipeline.py "
                                   "and the tests still call it\n"),)),
              Run("make test")),
             role="correction", corrections=(_c("keep-api", "r-rename", "after", JUDGE),)),
        _ack("ok"),
        Turn("standard library only: add fetch_rates(url) to a new rates.py that downloads "
             "exchange rates as JSON",
             "Added rates.fetch_rates(url) with urllib.request and json.",
             (Write("rates.py", _RATES),), request="r-rates", kind="agentic",
             corrections=(_c("stdlib", "r-rates", "up_front", NO_NEW_IMPORT,
                             "standard library only"),)),
        _ack("thanks"),
    ], commit="rename parse_amount to parse_money; rates.fetch_rates"),
    Session("x2", "codex", 1, [
        Turn("warn when an invoice has no due date in report.py",
             "report.render now prints a warning for each invoice without a due date.",
             (Edit("report.py", (("    for row in rows:\n",
                                  "    for row in rows:\n"
                                  '        if not row.get("due"):\n'
                                  "            print(f\"warning: invoice {row['id']} has no due "
                                  'date")\n'),)),),
             request="r-warn", kind="agentic"),
        Turn("use the logging module, not print",
             "Now the warning goes through logging (log.warning) instead of print.",
             (Edit("report.py", (("from billing import format_total\n",
                                  "import logging\n\nfrom billing import format_total\n\n"
                                  "log = logging.getLogger(__name__)\n"),
                                 ("            print(f\"warning: invoice {row['id']} has no due "
                                  'date")\n',
                                  '            log.warning("invoice %s has no due date", '
                                  'row["id"])\n'))),),
             role="correction", corrections=(_c("logging", "r-warn", "after", NOT_PRINT),)),
        Turn("export it as JSON instead of the table",
             "Added report.render_json(rows): the same rows as a JSON array.",
             (Edit("report.py", (("import logging\n", "import json\nimport logging\n"),
                                 ('    return "\\n".join(lines)\n',
                                  '    return "\\n".join(lines)\n\n\n'
                                  "def render_json(rows):\n"
                                  '    """The same rows as a JSON array, amounts as text."""\n'
                                  '    return json.dumps([dict(row, amount=str(row["amount"])) '
                                  "for row in rows], indent=2)\n"))),),
             request="r-json", kind="agentic"),
        Turn("run make test before you say it's done", "make test passes.",
             (Run("make test"),), role="correction",
             corrections=(_c("run-tests", "r-json", "after", RAN_TESTS),)),
        _ack("ok"),
    ], commit="report: warn on a missing due date; render_json"),
    Session("c3", "claude", 1, [
        Turn("walk me through how pipeline.py handles rows with a null amount, step by step",
             "Step 1: clean() loops over the rows...", interrupt=True,
             request="r-walk", kind="advice"),
        Turn("never mind the long version, just tell me whether nulls are dropped or kept",
             "Dropped: clean() skips every row whose amount is None.",
             (Read("pipeline.py"),), role="correction",
             corrections=(_c("short", "r-walk", "after_interrupt", SHORT),)),
        _ack("thanks"),
        Turn("delegate a survey of the modules to a sub-agent and summarise what each one does",
             "The sub-agent's survey: billing.py holds amounts, fees and total_due; cli.py the "
             "billing command; pipeline.py cleans rows; rates.py fetches exchange rates; "
             "report.py renders the table and JSON.",
             (Delegate("survey the modules", SURVEY_PROMPT),),
             request="r-survey", kind="agentic"),
        _ack("ok"),
    ], sub_agent=[
        Turn(SURVEY_PROMPT,
             "billing.py: amounts and fees. cli.py: the command line. pipeline.py: row "
             "cleaning. rates.py: exchange rates. report.py: the finance table.",
             (Run("ls *.py"),)),
    ]),
    # ------------------------------------------------------------------ batch 2 (day 2)
    Session("c4", "claude", 2, [
        Turn("refactor billing.py so parsing and formatting live in separate sections (keep "
             "the public API unchanged)",
             "billing.py now has a parsing and a formatting section; every public name is "
             "unchanged and make test passes.",
             (Read("billing.py"),
              Edit("billing.py", (("from decimal import Decimal\n\n\ndef parse_money(",
                                   "from decimal import Decimal\n\n# --- parsing ---\n\n\n"
                                   "def parse_money("),
                                  ("def format_total(amount):\n",
                                   "# --- formatting ---\n\n\ndef format_total(amount):\n"))),
              Run("make test")),
             request="r-refactor", kind="agentic",
             corrections=(_c("keep-api", "r-refactor", "up_front", JUDGE,
                             "keep the public API unchanged"),)),
        _ack("ok"),
        Turn("add a fetch_tax_table(url) to rates.py",
             "Added fetch_tax_table(url) using requests.",
             (Read("rates.py"),
              Edit("rates.py", (("import json\nimport urllib.request\n",
                                 "import json\nimport urllib.request\n\nimport requests\n"),
                                ("        return json.load(response)\n",
                                 "        return json.load(response)\n\n\n"
                                 "def fetch_tax_table(url):\n"
                                 '    """The tax table at `url`."""\n'
                                 "    return requests.get(url, timeout=10).json()\n")))),
             request="r-tax", kind="agentic"),
        Turn("don't add dependencies — use urllib like fetch_rates does",
             "Removed requests: fetch_tax_table uses urllib.request like fetch_rates.",
             (Edit("rates.py", (("import json\nimport urllib.request\n\nimport requests\n",
                                 "import json\nimport urllib.request\n"),
                                ("    return requests.get(url, timeout=10).json()\n",
                                 "    with urllib.request.urlopen(url, timeout=10) as response:\n"
                                 "        return json.load(response)\n"))),),
             role="correction", corrections=(_c("stdlib", "r-tax", "after", NO_NEW_IMPORT),)),
        Turn("make parse_money refuse an empty string; run the tests before you tell me it's "
             "done",
             "parse_money now raises ValueError on an empty string; make test passes.",
             (Edit("billing.py", (("    value = Decimal(text.strip())\n",
                                   "    if not text.strip():\n"
                                   '        raise ValueError("empty amount")\n'
                                   "    value = Decimal(text.strip())\n"),)),
              Run("make test")),
             request="r-empty", kind="agentic",
             corrections=(_c("run-tests", "r-empty", "up_front", RAN_TESTS,
                             "run the tests before you tell me it's done"),)),
        _ack("thanks"),
    ], commit="billing: sections, empty amounts; rates: tax table"),
    Session("c5", "claude", 2, [
        Turn("should CI use a fine-grained token or a deploy key to pull the private submodule?",
             _LONG_CREDENTIAL, request="r-credential", kind="advice"),
        Turn("one line please", "A deploy key: read-only and scoped to that one repository.",
             role="correction", corrections=(_c("short", "r-credential", "after", SHORT),)),
        Turn("staging can't reach the db, the job log says: ERROR db connect timeout "
             f"host=db.staging.internal:5432 ANTHROPIC_API_KEY={PLANTED_SECRET} — why does "
             "the connection time out?",
             "A timeout (not a refusal) means packets to db.staging.internal:5432 are dropped: "
             "check the staging runner's security group and the database's allow-list.",
             request="r-staging", kind="advice"),
        _ack("thanks"),
    ]),
    Session("x3", "codex", 2, [
        Turn("add a debug dump of each parsed invoice in pipeline.py",
             "clean() now prints each parsed invoice.",
             (Edit("pipeline.py", ((_PARSED_ROW,
                                    '        parsed = dict(row, amount=parse_amount(row["amount"]))\n'
                                    '        print("parsed", parsed)\n'
                                    "        out.append(parsed)\n"),)),),
             request="r-dump", kind="agentic"),
        Turn("don't print debug output, log it at debug level",
             "The dump is logged with log.debug now.",
             (Edit("pipeline.py", (("from billing import parse_amount\n",
                                    "import logging\n\nfrom billing import parse_amount\n\n"
                                    "log = logging.getLogger(__name__)\n"),
                                   ('        print("parsed", parsed)\n',
                                    '        log.debug("parsed %s", parsed)\n'))),),
             role="correction", corrections=(_c("logging", "r-dump", "after", NOT_PRINT),)),
        Turn("is format_total locale aware?", _LONG_LOCALE, (Read("billing.py"),),
             request="r-locale", kind="advice"),
        Turn("too long — answer in one line",
             "No: it always formats with a dot and the EUR suffix.", role="correction",
             corrections=(_c("short", "r-locale", "after", SHORT),)),
        Turn("move format_total into a new formatting.py",
             "Moved format_total to formatting.py and updated report.py and cli.py.",
             (Write("formatting.py", _FORMATTING),
              Edit("billing.py", (('def format_total(amount):\n    return f"{amount:.2f} EUR"\n\n\n',
                                   ""),)),
              Edit("report.py", (("from billing import format_total\n",
                                  "from formatting import format_total\n"),)),
              Edit("cli.py", (("from billing import format_total, parse_money\n",
                               "from billing import parse_money\nfrom formatting import "
                               "format_total\n"),))),
             request="r-move", kind="agentic"),
        Turn("keep the old import path working, other modules import format_total from billing",
             "billing re-exports format_total from formatting again; make test passes.",
             (Edit("billing.py", (("from decimal import Decimal\n",
                                   "from decimal import Decimal\n\nfrom formatting import "
                                   "format_total  # noqa: F401  (the old import path)\n"),)),
              Run("make test")),
             role="correction", corrections=(_c("keep-api", "r-move", "after", JUDGE),)),
        Turn("standard library only please: add a CSV export of the totals to report.py",
             "Added report.render_csv(rows) with the csv module; make test passes.",
             (Edit("report.py", (("import json\n", "import csv\nimport io\nimport json\n"),
                                 ("for row in rows], indent=2)\n",
                                  "for row in rows], indent=2)\n\n\n"
                                  "def render_csv(rows):\n"
                                  '    """id,total per row, as CSV text."""\n'
                                  "    buffer = io.StringIO()\n"
                                  "    writer = csv.writer(buffer)\n"
                                  "    for row in rows:\n"
                                  '        writer.writerow([row["id"], format_total(row["amount"])])\n'
                                  "    return buffer.getvalue()\n"))),
              Run("make test")),
             request="r-csv", kind="agentic",
             corrections=(_c("stdlib", "r-csv", "up_front", NO_NEW_IMPORT,
                             "standard library only please"),)),
        _ack("thanks"),
    ], commit="pipeline debug log; formatting.py; report.render_csv"),
]  # fmt: skip
