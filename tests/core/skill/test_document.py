import hashlib
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import UserError
from core.skill.document import (
    SkillDocument,
    SkillError,
    detect_newline,
    read_skill,
    skill_hash,
    write_skill,
)

SKILL = "---\nname: tidy\ndescription: Keep code tidy.\n---\n# Tidy\n\nAlways run the formatter.\n"


def test_skill_hash_is_sha256_of_exact_utf8():
    text = "héllo\r\n"
    assert skill_hash(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert skill_hash("a\n") != skill_hash("a\r\n")


def test_parse_splits_frontmatter_and_body():
    doc = SkillDocument.parse(SKILL)
    assert doc.frontmatter_raw == "name: tidy\ndescription: Keep code tidy.\n"
    assert doc.frontmatter == {"name": "tidy", "description": "Keep code tidy."}
    assert doc.body == "# Tidy\n\nAlways run the formatter.\n"
    assert doc.newline == "\n"
    assert doc.to_text() == SKILL
    assert doc.to_text()[doc.body_start :] == doc.body


def test_no_frontmatter():
    doc = SkillDocument.parse("# Just a body\n")
    assert doc.frontmatter_raw is None and doc.frontmatter is None
    assert doc.body == "# Just a body\n"
    assert doc.body_start == 0


def test_crlf_bom_and_no_trailing_newline_round_trip():
    text = "\ufeff---\r\nname: x\r\n---\r\nBody line\r\nlast"
    doc = SkillDocument.parse(text)
    assert doc.newline == "\r\n"
    assert doc.bom == "\ufeff"
    assert doc.frontmatter == {"name": "x"}
    assert doc.body == "Body line\r\nlast"
    assert doc.to_text() == text


def test_empty_frontmatter_and_frontmatter_only():
    assert SkillDocument.parse("---\n---\nbody").frontmatter == {}
    doc = SkillDocument.parse("---\nname: a\n---")
    assert doc.body == "" and doc.frontmatter == {"name": "a"}
    assert doc.to_text() == "---\nname: a\n---"


def test_yaml_dots_close_frontmatter():
    doc = SkillDocument.parse("---\nname: a\n...\nbody\n")
    assert doc.frontmatter == {"name": "a"} and doc.body == "body\n"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("---\nname: [unclosed\n---\nbody\n", "not valid YAML"),
        ("---\nname: x\nbody without a closing fence\n", "never closed"),
        ("---\n- a\n- b\n---\nbody\n", "key: value"),
        ("---\nwhen: 2024-13-45\n---\nbody\n", "not valid YAML"),
    ],
)
def test_corrupt_frontmatter_is_a_one_line_user_error(text, fragment):
    with pytest.raises(SkillError) as info:
        SkillDocument.parse(text)
    assert isinstance(info.value, UserError)
    assert fragment in str(info.value)
    assert "\n" not in str(info.value)


def test_yaml_error_names_the_file_line():
    with pytest.raises(SkillError, match="line 3"):
        SkillDocument.parse("---\nname: ok\n  bad: x\n---\n")


def test_detect_newline_dominant():
    assert detect_newline("a\r\nb\r\nc\n") == "\r\n"
    assert detect_newline("a\nb\r\n") == "\n"  # tie -> LF
    assert detect_newline("") == "\n"


_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=20
)


@st.composite
def skill_shapes(draw):
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    body_lines = draw(st.lists(_line, max_size=6))
    body = nl.join(body_lines)
    if body_lines and draw(st.booleans()):
        body += nl
    if body.startswith("---") or body.startswith("\ufeff"):
        body = "x" + body
    front = ""
    if draw(st.booleans()):
        keys = draw(st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), max_size=3, unique=True))
        values = draw(
            st.lists(
                st.from_regex(r"[A-Za-z0-9 ]{0,12}", fullmatch=True),
                min_size=len(keys),
                max_size=len(keys),
            )
        )
        raw = "".join(f"{k}: '{v}'{nl}" for k, v in zip(keys, values, strict=True))
        front = f"---{nl}{raw}---" + (nl if body or draw(st.booleans()) else "")
    return bom + front + body


@given(skill_shapes())
def test_round_trip_structured_shapes(text):
    assert SkillDocument.parse(text).to_text() == text


@given(st.text())
def test_round_trip_or_clear_error_on_any_text(text):
    try:
        doc = SkillDocument.parse(text)
    except SkillError as exc:
        assert "\n" not in str(exc)
        return
    assert doc.to_text() == text


def test_read_write_exact_bytes(tmp_path):
    path = tmp_path / "SKILL.md"
    raw = "\ufeff---\r\nname: x\r\n---\r\nbody\r\nend".encode()
    path.write_bytes(raw)
    text = read_skill(path)
    assert text.startswith("\ufeff") and "\r\n" in text
    out = tmp_path / "sub" / "out.md"
    write_skill(out, text)
    assert out.read_bytes() == raw


def test_read_missing_file(tmp_path):
    with pytest.raises(SkillError, match="not found"):
        read_skill(tmp_path / "nope.md")


def test_read_directory(tmp_path):
    with pytest.raises(SkillError, match="directory"):
        read_skill(tmp_path)


def test_read_non_utf8(tmp_path):
    path = tmp_path / "latin1.md"
    path.write_bytes("caf\xe9\n".encode("latin-1"))
    with pytest.raises(SkillError, match="not valid UTF-8"):
        read_skill(path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_read_unreadable(tmp_path):
    path = tmp_path / "secret.md"
    path.write_text("x")
    path.chmod(0)
    with pytest.raises(SkillError, match="cannot read"):
        read_skill(path)


def test_write_into_a_file_path_fails_cleanly(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SkillError, match="cannot write"):
        write_skill(blocker / "SKILL.md", "text")
    assert blocker.read_text() == "x"


def test_load_skill_refuses_a_corrupt_skill_with_its_path(tmp_path):
    from core.skill.document import load_skill

    good = tmp_path / "good.md"
    good.write_bytes(b"---\r\nname: x\r\ndescription: y\r\n---\r\nBody")
    assert load_skill(good) == "---\r\nname: x\r\ndescription: y\r\n---\r\nBody"
    bad = tmp_path / "bad.md"
    bad.write_text("---\nname: [unclosed\n---\nBody\n", encoding="utf-8")
    with pytest.raises(SkillError) as err:
        load_skill(bad)
    assert str(bad) in str(err.value) and "\n" not in str(err.value)
