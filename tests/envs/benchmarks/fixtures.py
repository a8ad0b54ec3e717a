"""Tiny fixture data for the benchmark environments, made by us in the real shapes: a
manifest folder and a data folder in the published `{train,val,test}/items.json` layout,
the publishers' source layouts for OfficeQA and SpreadsheetBench, and the scripted TEST
DOUBLE client the rollouts run through."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from core.config import config_from_dict
from core.models.factory import build_model_client

SPLIT_IDS = {"train": ["t1", "t2"], "val": ["v1"], "test": ["x1"]}


def write_split_dirs(root: Path, rows: dict[str, list[dict[str, Any]]]) -> Path:
    for split, items in rows.items():
        (root / split).mkdir(parents=True, exist_ok=True)
        (root / split / "items.json").write_text(json.dumps(items), encoding="utf-8")
    return root


def write_manifest(root: Path, ids: dict[str, list[str]] = SPLIT_IDS, **fields: Any) -> Path:
    """A manifest folder of `ids`; `fields[id]` adds manifest fields to an entry."""
    rows = {s: [{"id": i, **fields.get(i, {})} for i in v] for s, v in ids.items()}
    write_split_dirs(root, rows)
    counts = {s: len(v) for s, v in ids.items()}
    (root / "split_manifest.json").write_text(json.dumps({"counts": counts}), encoding="utf-8")
    return root


def scripted_client(responder):
    """A model client whose target is the scripted TEST DOUBLE `responder` (no cache)."""
    config = config_from_dict({"cache": {"enabled": False}})
    return build_model_client(config, scripted={"target": responder})


# ------------------------------------------------------------------------------ OfficeQA
BULLETIN = "\n".join(
    [
        "TREASURY BULLETIN, JANUARY 1944",
        "Table 3.- Public debt",
        *[f"line {n}" for n in range(1, 300)],
        "Total public debt: 170,659 million dollars",
    ]
)
OFFICEQA_QUESTION = "What was the total public debt in January 1944, in millions?"


def officeqa_source(src: Path) -> Path:
    """OfficeQA as its publishers ship it: officeqa_full.csv and the bulletin text files
    (every item cites the January bulletin; the February one is another item's)."""
    (src / "docs" / "1944").mkdir(parents=True)
    (src / "docs" / "1944" / "treasury_bulletin_1944_01.txt").write_text(BULLETIN)
    (src / "docs" / "1944" / "treasury_bulletin_1944_02.txt").write_text(
        "FEBRUARY: secret other doc"
    )
    with (src / "officeqa_full.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(
            handle, ["uid", "question", "answer", "category", "source_files", "source_docs"]
        )
        writer.writeheader()
        for ids in SPLIT_IDS.values():
            for i in ids:
                writer.writerow(
                    {
                        "uid": i,
                        "question": OFFICEQA_QUESTION,
                        "answer": "170,659",
                        "category": "easy",
                        "source_files": "treasury_bulletin_1944_01.txt",
                        "source_docs": "https://example.org/bulletin",
                    }
                )
    return src


# ---------------------------------------------------------------------- SpreadsheetBench
SOLUTION = """```python
import openpyxl
wb = openpyxl.load_workbook("input.xlsx")
ws = wb["Data"]
for row in range(2, 4):
    ws[f"C{row}"] = ws[f"A{row}"].value + ws[f"B{row}"].value
wb.save("output.xlsx")
```"""


def workbook(path, with_sums: bool) -> None:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Data"
    ws.append(["a", "b", "sum"])
    ws.append([1, 2, 3 if with_sums else None])
    ws.append([10.004, 5, 15.004 if with_sums else None])
    wb.save(path)


def spreadsheet_release(root: Path, cases: int = 2) -> Path:
    """The published layout: dataset.json and spreadsheet/<id>/<n>_<id>_{input,answer}.xlsx."""
    rows = []
    for ids in SPLIT_IDS.values():
        for i in ids:
            folder = root / "spreadsheet" / i
            folder.mkdir(parents=True)
            for n in range(1, cases + 1):
                workbook(folder / f"{n}_{i}_input.xlsx", with_sums=False)
                workbook(folder / f"{n}_{i}_answer.xlsx", with_sums=True)
            rows.append(
                {
                    "id": i,
                    "instruction": "Fill column C with the sum of A and B.",
                    "spreadsheet_path": f"spreadsheet/{i}",
                    "instruction_type": "Cell-Level Manipulation",
                    "answer_position": "Data!C2:C3",
                }
            )
    (root / "dataset.json").write_text(json.dumps(rows))
    return root
