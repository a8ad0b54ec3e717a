"""The pages a newcomer reads first say one thing per sentence: no clauses chained with
semicolons in their prose (code, inline code, HTML comments and parenthesised asides
aside), and no sentence longer than a reader holds in mind at once."""

from __future__ import annotations

import re

import pytest

from tests.support.doc_examples import ROOT

FIRST_READ = (
    "README.md",
    "docs/getting-started/agent-user.md",
    "docs/getting-started/researcher.md",
    "docs/getting-started/ci-and-nightly.md",
    "docs/guides/review-and-adopt.md",
    "docs/guides/roll-back.md",
)
MAX_WORDS = 60


def _prose(text: str) -> str:
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"`[^`]*`", "CODE", text)
    while True:  # innermost parentheses first: an aside may hold its own list
        bare = re.sub(r"\([^()]*\)", "", text)
        if bare == text:
            return text
        text = bare


@pytest.mark.parametrize("page", FIRST_READ)
def test_no_chained_clauses_or_overlong_sentences(page):
    prose = _prose((ROOT / page).read_text(encoding="utf-8"))
    chained = [line.strip() for line in prose.splitlines() if ";" in line]
    assert chained == [], f"{page}: split these sentences: {chained}"
    sentences = re.split(r"(?<=[.!?:])\s+|\n\s*\n|\n\s*[-|#*]", prose)
    long = [s for s in sentences if len(s.split()) > MAX_WORDS]
    assert long == [], f"{page}: sentences over {MAX_WORDS} words: {long}"
