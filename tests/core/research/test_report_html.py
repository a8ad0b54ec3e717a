"""The report page is self-contained and escapes what a run directory supplies."""

from __future__ import annotations

import re

from core.research.report_html import report_html
from core.research.val_curve import ValCurve, val_curve
from tests.support.recorded_runs import record_run


def test_a_hostile_run_name_is_text_not_markup():
    card = {"run_id": "<script>alert(1)</script>", "val": {"baseline": 0.0}}
    page = report_html(None, [ValCurve(run_id=card["run_id"], best=[(-1, 0.0)])], [card])
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_nothing_on_the_page_is_fetched():
    page = report_html(None, [ValCurve(run_id="r")], [{"run_id": "r"}])
    assert not re.search(r"""(src|href)\s*=|@import|url\(""", page)


def test_the_val_curve_of_a_recorded_run(tmp_path):
    run = record_run(tmp_path, "full")
    curve = val_curve("full", run / "events.jsonl", 0.0)
    # baseline, then the best after each of the 4 steps; step 0's candidate accepted at
    # 0.6; steps 1 and 3 rejected early (no full score), so not plotted
    assert curve.best == [(-1, 0.0), (0, 0.6), (1, 0.6), (2, 0.6), (3, 0.6)]
    assert curve.candidates == [(0, 0.6, True)]
