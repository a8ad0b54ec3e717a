import pytest

from core.skill.protected_blocks import write_block
from core.skill.validation import CHATTER, validate_candidate

REALISTIC = """---
name: pdf-forms
description: Fill PDF forms reliably with pypdf. Use when the user asks to fill a form.
---
# Filling PDF forms

As an AI assistant working in a repository, you should check the form fields first.
Here is an example of the field listing you should produce:

```python
from pypdf import PdfReader
reader = PdfReader("form.pdf")
print(reader.get_fields())
```

## Steps

1. List the fields (see above).
2. Map the user's data to field names; ask when a field is ambiguous.
3. Write the output to a new file; never overwrite the input.
   ```bash
   python fill.py in.pdf out.pdf
   ```
4. If the user says "I have made the changes you asked for", re-read the file.

~~~text
Here is the updated skill
I have made the following changes
~~~

> Note: the following changes in pypdf 4 matter: `PdfFileReader` was removed.

Let me explain the fields to the user when they ask.
Of course, verify the result by reading it back.
"""


def test_realistic_skill_is_valid():
    assert validate_candidate(REALISTIC, max_chars=20_000) == []
    assert validate_candidate(REALISTIC, max_chars=20_000, original=REALISTIC) == []


def test_realistic_skill_with_protected_block_is_valid():
    text = write_block(REALISTIC, "slow-update", "Prefer fewer, clearer steps.")
    assert validate_candidate(text, max_chars=20_000) == []


def test_broken_frontmatter():
    text = REALISTIC.replace("name: pdf-forms", "name: [pdf-forms")
    (problem,) = validate_candidate(text, max_chars=20_000)
    assert "frontmatter" in problem


def test_frontmatter_keys_must_be_kept_when_original_had_them():
    text = REALISTIC.replace("name: pdf-forms\n", "")
    problems = validate_candidate(text, max_chars=20_000, original=REALISTIC)
    assert problems == ["the frontmatter lost its 'name'; keep it"]
    assert validate_candidate(text, max_chars=20_000) == []  # no original: nothing to compare


def test_frontmatter_removed():
    body = REALISTIC.split("---\n", 2)[2]
    problems = validate_candidate(body, max_chars=20_000, original=REALISTIC)
    assert any("frontmatter block was removed" in p for p in problems)


def test_size_budget():
    (problem,) = validate_candidate("x" * 101, max_chars=100)
    assert "101 characters" in problem and "100" in problem
    assert validate_candidate("x" * 100, max_chars=100) == []


def test_oversize_original_may_shrink_but_not_grow():
    original = "x" * 150
    assert validate_candidate("x" * 140, max_chars=100, original=original) == []
    assert len(validate_candidate("x" * 160, max_chars=100, original=original)) == 1


@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_unclosed_code_fence(fence):
    text = f"# Skill\n\n{fence}python\nprint(1)\n"
    (problem,) = validate_candidate(text, max_chars=1000)
    assert "never closed" in problem and "line 3" in problem


def test_fence_closed_by_other_character_stays_open():
    (problem,) = validate_candidate("```\ncode\n~~~\n", max_chars=1000)
    assert "never closed" in problem


def test_fence_line_numbers_count_frontmatter():
    text = "---\nname: a\n---\nIntro\n```\nx\n"
    (problem,) = validate_candidate(text, max_chars=1000)
    assert "line 5" in problem


def test_inline_triple_backticks_are_not_a_fence():
    assert validate_candidate("Use ```code``` sparingly.\n", max_chars=1000) == []


def test_unclosed_fence_already_in_original_is_tolerated():
    original = "# Skill\n```\nopen forever\n"
    candidate = "# Skill\nNew rule.\n```\nopen forever\n"
    assert validate_candidate(candidate, max_chars=1000, original=original) == []
    assert validate_candidate(candidate, max_chars=1000) != []


@pytest.mark.parametrize(
    "line",
    [
        "Here is the updated skill:",
        "Sure! Here's the revised SKILL.md",
        "Below is the improved skill document.",
        "I have made the following changes:",
        "I've made a few small changes to the wording.",
        "I've updated the skill to cover retries.",
        "The following changes were made:",
        "Updated skill:",
        "As an AI language model, I cannot run code.",
        "As an AI, I don't have access to files.",
        "Let me know if you want further tweaks.",
        "I hope this helps!",
        "I'm sorry, but I can't help with that.",
        '{"op": "replace", "target": "x", "content": "y"}',
        "- **Here is the updated skill**",
        "## Here is the new version",
    ],
)
def test_chatter_is_caught(line):
    text = f"# Skill\n\nRule one.\n{line}\nRule two.\n"
    problems = validate_candidate(text, max_chars=1000)
    assert len(problems) == 1 and "chatter" in problems[0], problems


@pytest.mark.parametrize(
    "line",
    [
        "As an AI assistant, you must cite sources.",
        "Here is an example of a good commit message:",
        "Here is the command to run the tests:",
        "I have to say this rarely matters.",
        "Let me explain the fields to the user.",
        "Of course, check the output.",
        "Describe the changes you made in the PR body.",
        "When the user says they have made changes, re-run the linter.",
        "List the updated skill names in the summary.",
        "The op field is optional.",
    ],
)
def test_ordinary_prose_is_not_chatter(line):
    assert validate_candidate(f"# Skill\n\n{line}\n", max_chars=1000) == []


def test_chatter_inside_code_fence_is_ignored():
    text = "# Skill\n```\nHere is the updated skill:\n```\n"
    assert validate_candidate(text, max_chars=1000) == []


def test_chatter_already_in_original_is_tolerated_but_new_chatter_is_not():
    original = "# Skill\nHere is the updated skill:\nRule.\n"
    assert validate_candidate(original + "More.\n", max_chars=1000, original=original) == []
    candidate = original + "I hope this helps.\n"
    (problem,) = validate_candidate(candidate, max_chars=1000, original=original)
    assert "hope" in problem


def test_whole_document_wrapped_in_markdown_fence():
    text = "```markdown\n---\nname: a\n---\n# Skill\nRule.\n```\n"
    problems = validate_candidate(text, max_chars=1000)
    assert any("wrapped" in p for p in problems)


def test_wrapper_with_inner_fence_is_still_reported():
    text = "```md\n# Skill\n```bash\nls\n```\n```\n"
    problems = validate_candidate(text, max_chars=1000)
    assert any("wrapped" in p for p in problems)


def test_skill_starting_and_ending_with_code_examples_is_not_wrapped():
    text = "```\nls\n```\nRun the command above.\n```\npwd\n```\n"
    assert validate_candidate(text, max_chars=1000) == []


def test_unbalanced_protected_markers():
    text = "# Skill\n<!-- skillopt:slow-update:start -->\nguidance\n"
    (problem,) = validate_candidate(text, max_chars=1000)
    assert "without an end" in problem
    stray = "# Skill\n<!-- skillopt:notes:end -->\n"
    assert "without a start" in validate_candidate(stray, max_chars=1000)[0]


def test_several_problems_reported_together():
    text = "Here is the updated skill:\n```\n" + "x" * 200
    problems = validate_candidate(text, max_chars=100)
    assert len(problems) == 3


def test_chatter_patterns_are_documented():
    assert all(label and pattern.pattern for label, pattern in CHATTER)
