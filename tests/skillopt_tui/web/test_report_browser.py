"""`skillopt report` opened in the system's Chromium (Playwright, as the web-face tests):
the page shows the compare table and the val curves with the network cut off."""

from __future__ import annotations

from tests.skillopt_tui.cli.test_train_cmds import skillopt
from tests.support.recorded_runs import record_run


def test_the_report_shows_the_table_offline(tmp_path, browser):
    base, full = record_run(tmp_path, "no_edit"), record_run(tmp_path, "full")
    out = tmp_path / "report.html"
    done = skillopt(tmp_path, "report", str(base), str(full), "--out", str(out),
                    "--csv", str(tmp_path / "rollouts.csv"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    context = browser.new_context(offline=True)
    requests: list[str] = []
    try:
        page = context.new_page()
        page.on("request", lambda r: requests.append(r.url))
        page.goto(out.as_uri())
        table = page.get_by_role("table", name="val per item")
        assert table.is_visible()
        rows = table.locator("tr").all_inner_texts()
        assert [r.split("\t") for r in rows[-1:]] == [["v05", "0.000", "1.000 ▲"]]
        improved = table.locator("td.improved")
        assert improved.count() == 3
        summary = page.get_by_role("table", name="test summary").inner_text()
        assert "+2 -0 =1" in summary and "0.5" in summary
        svg = page.get_by_role("img", name="val curves")
        assert svg.is_visible() and svg.locator("polyline").count() == 2
        assert svg.locator("text", has_text="full").count() == 1  # the legend
        assert page.locator("pre").count() == 2  # both cards
        assert '"sha256"' in page.locator("pre").first.inner_text()
    finally:
        context.close()
    assert requests == [out.as_uri()]  # nothing but the page itself was fetched
    lines = (tmp_path / "rollouts.csv").read_text().splitlines()
    assert lines[0].startswith("run_id,phase,step,split")
    assert {line.split(",")[0] for line in lines[1:]} == {"no_edit", "full"}
