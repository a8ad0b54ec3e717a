"""A harvested prompt is capped (sleep/harvest/prompt_cap.py): a pasted 15 MB log is kept as its
first MAX_PROMPT_CHARS with a note and `truncated: true`, and a secret cut by the cap
leaves no fragment. Before, the whole prompt was redacted and kept, whatever its size. And
the redactor's choice of spans is the same as comparing each match with every span chosen
(which it did, quadratically, before)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sleep.harvest.prompt_cap import MAX_PROMPT_CHARS, redact_capped
from sleep.harvest.run import HarvestOptions, harvest
from sleep.redact import Redactor
from tests.sleep.transcripts import claude_assistant, claude_user, write_claude

KEY = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_a_huge_prompt_is_cut_with_a_note_and_no_secret_fragment(tmp_path):
    filler = "the build log says the cache was cold again; " * 10
    head = (filler * (MAX_PROMPT_CHARS // len(filler) + 1))[: MAX_PROMPT_CHARS - 10]
    prompt = head + KEY + " and later " + filler * 4000 + " token " + GH
    assert len(prompt) > 1_000_000
    claude = tmp_path / "claude"
    records = [claude_user(prompt, session="s-1"), claude_assistant(session="s-1")]
    write_claude(claude, [*records, claude_user("a short one", session="s-1")], session="s-1")
    result = harvest(
        HarvestOptions(state_dir=tmp_path / "st", claude_home=str(claude),
                       codex_home=str(tmp_path / "none"), commit=False)
    )  # fmt: skip
    [session] = result.sessions
    big, small = (t.to_json() for t in session.tasks)
    assert big["truncated"] is True and "truncated" not in small
    assert big["text"].endswith(f"[prompt cut: the first 32,000 of {len(prompt):,} characters]")
    assert len(big["text"]) < MAX_PROMPT_CHARS + 100
    for secret in (KEY, GH):  # the one straddling the cut and the one past it
        for n in range(6, len(secret) + 1):
            assert secret[:n] not in big["text"], secret[:n]
    assert small["text"] == "a short one"


def test_the_cut_never_leaves_half_a_mark():
    text = "x" * (MAX_PROMPT_CHARS - 5) + " " + KEY + " more" * 10
    redacted, cut = redact_capped(Redactor(), text)
    kept = redacted.text.split("\n[prompt cut")[0]
    assert cut and kept == "x" * (MAX_PROMPT_CHARS - 5) + " "
    assert redacted.findings[0].kind == "aws_access_key_id"


def _quadratic(redactor: Redactor, text: str) -> list[tuple[int, int, str]]:
    """The old choice: each match against every span chosen so far."""
    chosen: list[tuple[int, int, str]] = []
    for rule in redactor.rules:
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            if start == end:
                continue
            if rule.accept is not None and not rule.accept(match.group(rule.group)):
                continue
            if any(start < e and s < end for s, e, _ in chosen):
                continue
            chosen.append((start, end, rule.kind))
    return sorted(chosen)


PIECES = [
    "token=", "password: ", "secret ", "key ", KEY, GH, "sk-ant-api03-" + "abcDEF123_" * 3,
    "the api key is ", "Hunter22!x", "Bearer ", "abc123XYZ789qwe", " ", "\n", "=", ":",
    "postgres://u:pw12345@db/x", "AWS_SECRET_ACCESS_KEY=", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_spans_are_the_ones_the_quadratic_choice_made(pieces):
    text = "".join(pieces)
    redactor = Redactor()
    assert redactor.spans(text) == _quadratic(redactor, text)
