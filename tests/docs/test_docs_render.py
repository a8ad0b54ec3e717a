"""The built site renders what its Markdown says, offline: every heading is a heading,
every list a list, no fence is left as raw text, and Mermaid comes from the site itself
(the theme would otherwise fetch it from a CDN, and offline the diagrams are raw text)."""

from __future__ import annotations

import re

from docs_tools.render_check import problems
from tests.docs.test_docs_build import _build
from tests.support.doc_examples import ROOT


def test_every_page_renders_its_headings_lists_and_fences_and_serves_mermaid(tmp_path):
    site = tmp_path / "site"
    proc = _build(ROOT / "mkdocs.yml", site)
    assert proc.returncode == 0, proc.stderr[-4000:]
    bench = (site / "guides/add-a-benchmark/index.html").read_text()
    assert re.search(r"<h2[^>]*>5\. The seed skill and the config", bench)
    web = (site / "guides/web/index.html").read_text()
    assert web.count("<li>") >= 5 and "<p>Security model, as Jupyter's:\n- " not in web
    home = (site / "index.html").read_text()
    assert 'class="mermaid"' in home
    assert 'src="assets/vendor/mermaid.min.js"' in home
    assert (site / "assets/vendor/mermaid.min.js").stat().st_size > 1_000_000
    assert "unpkg.com" not in home and "cdn.jsdelivr" not in home


def test_the_check_names_what_the_html_lost():
    md = "# A\n\nIntro:\n- one\n- two\n\n## B\n\n```python\n# not a heading\n```\n"
    lost = "<h1>A</h1><p>Intro:\n- one\n- two</p><p>```python</p>"
    assert problems(md, lost) == [
        "2 headings in the Markdown, 1 in the HTML",
        "2 list items in the Markdown, 0 in the HTML",
        "a literal ``` in the HTML (a fence the highlighter did not parse)",
    ]
    kept = "<h1>A</h1><ul><li>one</li><li>two</li></ul><h2>B</h2><pre><code>```</code></pre>"
    assert problems(md, kept) == []
