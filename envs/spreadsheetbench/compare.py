"""Cell comparison by SpreadsheetBench's published rules.

Each value is first transformed: numbers (and strings that parse as numbers, and booleans)
become floats rounded to 2 decimals — a fixed quantisation, not a tolerance; datetimes
become Excel day numbers (days since 1899-12-30) rounded to a whole day; times become their
text without the last three characters (microsecond digits). Then an empty string equals an
empty cell, and otherwise the types must match and the values be equal. Formats and styles
are not compared (the published evaluator does not either).

`answer_position` is the benchmark's field: comma-separated ranges, each `Sheet!A1:B3`,
`'My sheet'!C2` or a bare range on the first sheet of the gold workbook.
"""

from __future__ import annotations

import datetime
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.environment.contract import Score
from core.environment.verdicts import VERDICT_CORRECT, VERDICT_EMPTY, VERDICT_WRONG
from envs.scoring import shown_text

EXCEL_EPOCH = datetime.datetime(1899, 12, 30)
# A produced workbook is a zip written by a generated program: one that unpacks to more
# than this would take the scorer's memory and time (a zip bomb); it counts as unreadable.
MAX_UNPACKED_BYTES = 256 * 1024 * 1024


def transform(value: Any) -> Any:
    if isinstance(value, bool | int | float):
        return round(float(value), 2)
    if isinstance(value, datetime.datetime):
        delta = value - EXCEL_EPOCH
        return round(delta.days + delta.seconds / 86400.0, 0)
    if isinstance(value, datetime.time):
        return str(value)[:-3]
    if isinstance(value, str):
        try:
            return round(float(value), 2)
        except ValueError:
            return value
    return value


def cells_equal(gold: Any, pred: Any) -> bool:
    g, p = transform(gold), transform(pred)
    if g in ("", None) and p in ("", None):
        return True
    if type(g) is not type(p):
        return False
    return g == p


def _column_number(name: str) -> int:
    number = 0
    for ch in name.upper():
        number = number * 26 + ord(ch) - 64
    return number


def _column_name(number: int) -> str:
    name = ""
    while number:
        number, rest = divmod(number - 1, 26)
        name = chr(65 + rest) + name
    return name


_CELL = re.compile(r"^\$?([A-Za-z]+)\$?(\d+)$")


def cell_names(cell_range: str) -> list[str]:
    """'A1:B2' -> ['A1', 'A2', 'B1', 'B2'] (column by column); 'C3' -> ['C3']."""
    ends = [e.strip() for e in cell_range.split(":")]
    parsed = [_CELL.match(e) for e in ends]
    if not all(parsed) or len(ends) > 2:
        raise ValueError(f"bad cell range {cell_range!r}")
    if len(parsed) == 1:
        parsed = parsed * 2
    (c1, r1), (c2, r2) = [(_column_number(m.group(1)), int(m.group(2))) for m in parsed]
    return [
        f"{_column_name(c)}{r}"
        for c in range(min(c1, c2), max(c1, c2) + 1)
        for r in range(min(r1, r2), max(r1, r2) + 1)
    ]


def parse_positions(answer_position: str, first_sheet: str) -> list[tuple[str, str]]:
    """[(sheet, range)] of an answer_position field."""
    out = []
    for part in (answer_position or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "!" in part:
            sheet, cells = part.rsplit("!", 1)
            out.append((sheet.strip().strip("'\""), cells.strip().strip("'\"")))
        else:
            out.append((first_sheet, part.strip("'\"")))
    return out


@dataclass(frozen=True)
class Comparison:
    correct: int
    total: int
    first_mismatch: str = ""  # "Sheet!B2: expected 3.0, got None"

    @property
    def all_correct(self) -> bool:
        return self.total > 0 and self.correct == self.total


def _unpacked_size(path: Path) -> int:
    """What the zip's members add up to, unpacked (0 when it is not a zip: openpyxl then
    says it is unreadable). zipfile never inflates a member past its declared size."""
    try:
        with zipfile.ZipFile(path) as archive:
            return sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return 0


def compare_workbooks(gold_path: Path, pred_path: Path, answer_position: str) -> Comparison:
    """Cells of `answer_position` in the produced workbook against the gold one (values as
    last computed: formulas are compared by their cached results, as published)."""
    import openpyxl

    gold = openpyxl.load_workbook(gold_path, data_only=True)
    positions = parse_positions(answer_position, gold.sheetnames[0])
    names = [(sheet, cell) for sheet, rng in positions for cell in cell_names(rng)]
    if not Path(pred_path).is_file():
        return Comparison(0, len(names), "no output workbook")
    if _unpacked_size(Path(pred_path)) > MAX_UNPACKED_BYTES:
        limit = MAX_UNPACKED_BYTES // (1024 * 1024)
        return Comparison(0, len(names), f"output workbook unpacks to more than {limit} MB")
    try:
        pred = openpyxl.load_workbook(pred_path, data_only=True)
    except Exception as exc:  # any unreadable file is a wrong answer, not a crash
        return Comparison(0, len(names), f"output workbook unreadable: {type(exc).__name__}")
    correct, first = 0, ""
    for sheet, cell in names:
        if sheet not in pred.sheetnames:
            first = first or f"sheet {sheet!r} missing"
            continue
        g, p = gold[sheet][cell].value, pred[sheet][cell].value
        if cells_equal(g, p):
            correct += 1
        elif not first:
            first = f"{sheet}!{cell}: expected {g!r}, got {p!r}"
    return Comparison(correct, len(names), first)


def explain(comparisons: list[Comparison], answer_position: str, problem: str) -> Score:
    """The item's score from its test cases' comparisons: exact match only when every case
    is right, the share of right cells as the soft score (both targets score this way)."""
    correct = sum(c.correct for c in comparisons)
    total = sum(c.total for c in comparisons) or 1
    hard = 1.0 if comparisons and all(c.all_correct for c in comparisons) else 0.0
    soft = correct / total
    if hard:
        verdict = VERDICT_CORRECT
    elif problem:
        verdict = f"{VERDICT_EMPTY} ({shown_text(problem.splitlines()[-1])})"
    else:
        first = next((c.first_mismatch for c in comparisons if c.first_mismatch), "")
        verdict = f"{VERDICT_WRONG} (first wrong cell: {first})" if first else VERDICT_WRONG
    got = (
        f"{correct} of {total} cells right over {len(comparisons)} test case(s)"
        if comparisons
        else "no output: the program did not run to the end"
    )
    explanation = (
        f'expected "every cell of {answer_position} as in the answer workbook"; got "{got}" — '
        f"verdict: {verdict}; exact match {int(hard)}; token F1 {soft:.2f}"
    )
    return Score(hard=hard, soft=soft, explanation=explanation)
