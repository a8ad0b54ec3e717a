"""Does a page's HTML say what its Markdown says? `mkdocs build --strict` checks links and
anchors, not rendering: a fence whose info string the highlighter refuses stays raw text
and swallows the headings after it, and a list with no blank line before it becomes one
paragraph of literal "- " marks. Both build without a warning; this check makes them fail.

Counted outside fenced blocks (their content is code, not structure): Markdown headings
against <h1>..<h6>, list items against <li>, and no literal ``` left in the HTML's text.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s*(?P<fence>```+|~~~+)")
HEADING = re.compile(r"^#{1,6}\s+\S")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
HTML_HEADING = re.compile(r"<h[1-6][\s>]")
HTML_ITEM = re.compile(r"<li[\s>]")
CODE = re.compile(r"<(pre|code)\b.*?</\1>", re.DOTALL)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def _structure(markdown: str) -> tuple[int, int]:
    """The headings and list items a page's Markdown declares outside its fences."""
    headings = items = 0
    fence: str | None = None
    for line in COMMENT.sub("", markdown).splitlines():
        m = FENCE.match(line)
        if fence is not None:
            if m and m["fence"].startswith(fence) and line.strip() == m["fence"]:
                fence = None
            continue
        if m:
            fence = m["fence"]
            continue
        headings += bool(HEADING.match(line))
        items += bool(LIST_ITEM.match(line))
    return headings, items


def problems(markdown: str, html: str) -> list[str]:
    """What the HTML lost of the Markdown, one sentence each; empty when it kept it all."""
    headings, items = _structure(markdown)
    out: list[str] = []
    found = len(HTML_HEADING.findall(html))
    if found < headings:
        out.append(f"{headings} headings in the Markdown, {found} in the HTML")
    found = len(HTML_ITEM.findall(html))
    if found < items:
        out.append(f"{items} list items in the Markdown, {found} in the HTML")
    if "```" in CODE.sub("", html):
        out.append("a literal ``` in the HTML (a fence the highlighter did not parse)")
    return out
