"""Every shell and Python example of docs/ and README.md runs (tests/support/doc_examples.py
says how): an example that stops working fails the suite. Two pages are run by tests of
their own, which also check what they built: the add-a-benchmark guide
(tests/docs/test_add_a_benchmark.py) and README.md, whose one runnable block is the first
session (tests/docs/test_first_session.py types it in a fresh shell; running it here too
trained the same quickstart twice)."""

from __future__ import annotations

import pytest

from tests.support.doc_examples import (
    KNOWN_LANGS,
    ROOT,
    RUN_LANGS,
    blocks,
    first_session_block,
    pages,
    run_page,
)

OWN_TEST = {"docs/guides/add-a-benchmark.md", "README.md"}
# Pages whose examples train on the embedded model (marked as such, like its other tests).
TRAINS = ("skillopt train --config", "skillopt eval --config")


def _page_params():
    out = []
    for path in pages():
        rel = str(path.relative_to(ROOT))
        if rel in OWN_TEST or not any(b.runs for b in blocks(path)):
            continue
        trains = any(any(t in b.code for t in TRAINS) for b in blocks(path) if b.runs)
        marks = [pytest.mark.embedded] if trains else []
        out.append(pytest.param(path, id=rel, marks=marks))
    return out


@pytest.mark.parametrize("page", _page_params())
def test_page_examples_run(page, tmp_path):
    outcome = run_page(page, tmp_path)
    assert outcome.ran > 0


def test_the_readme_runs_whole_in_the_first_session_test():
    """README.md is left to test_first_session, which runs only its first-session block: a
    second runnable block there would run in no test."""
    runnable = [b.where for b in blocks(ROOT / "README.md") if b.runs]
    assert runnable == [f"README.md:{first_session_block().line}"], (
        "README.md has runnable blocks besides the first session: run them in "
        f"tests/docs/test_first_session.py or mark them not-run ({runnable})"
    )


def test_every_block_is_fenced_with_a_known_language():
    """An untagged or unknown block would be a command no test runs."""
    bad = [
        f"{b.where} ({b.lang or 'no language'})"
        for path in pages()
        for b in blocks(path)
        if b.lang not in KNOWN_LANGS
    ]
    assert not bad, "fence these with a known language (sh, python, yaml, text, ...): " + ", ".join(
        bad
    )


def test_no_shell_command_hides_in_an_indented_block():
    """Markdown's indented code blocks are not collected: a command there is never run."""
    found = []
    for path in pages():
        in_fence = False
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
            elif not in_fence and line.startswith("    skillopt"):
                found.append(f"{path.relative_to(ROOT)}:{number}")
    assert not found, found


def test_not_run_markers_give_a_reason_and_mark_a_runnable_block():
    for path in pages():
        for b in blocks(path):
            if b.not_run is not None:
                assert b.not_run.strip(), f"{b.where}: a not-run marker needs its reason"
                assert b.lang in RUN_LANGS, f"{b.where}: only shell and Python blocks run"


def test_the_collector_finds_the_examples(tmp_path):
    """The collector itself: a page with a file block, a command using it, and a marked
    block that would fail if it ran."""
    page = tmp_path / "page.md"
    page.write_text(
        "# A page\n\n"
        '```text title="notes/hello.txt"\nhello\n```\n\n'
        "```sh\ngrep -q hello notes/hello.txt\n```\n\n"
        "<!-- not-run: it fails on purpose -->\n```sh\nexit 1\n```\n\n"
        "```python\nimport pathlib; assert pathlib.Path('notes/hello.txt').exists()\n```\n"
    )
    (tmp_path / "run").mkdir()
    outcome = run_page(page, tmp_path / "run")
    assert (outcome.ran, outcome.files, outcome.skipped) == (2, 1, 1)


def test_a_failing_example_fails_with_its_page_and_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```sh\nskillopt no-such-command\n```\n")
    (tmp_path / "run").mkdir()
    with pytest.raises(AssertionError, match=r"page\.md:3: the example exited 2"):
        run_page(page, tmp_path / "run")
