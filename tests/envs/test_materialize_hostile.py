"""Hostile sources for every materialiser: files named outside the source (absolute paths,
`..`, symlinks out), malformed and non-UTF-8 inputs, bad archives. Each must fail with one
EnvError line and leave the data directory exactly as it was before the run (here: a
previous good materialisation), with nothing from outside the source copied anywhere."""

from __future__ import annotations

import base64
import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from core.environment.contract import EnvError
from envs.docvqa.materialize import materialize as docvqa
from envs.livemath.materialize import materialize as livemath
from envs.officeqa.materialize import materialize as officeqa
from envs.searchqa.materialize import materialize as searchqa
from tests.envs.benchmarks.fixtures import SPLIT_IDS, officeqa_source, write_manifest

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
SECRET = b"TOP-SECRET-OUTSIDE-THE-SOURCE\n"
ALL_IDS = [i for ids in SPLIT_IDS.values() for i in ids]


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under `root` (and its siblings' names: no staging folder left behind)."""
    siblings = sorted(p.name for p in root.parent.iterdir()) if root.parent.is_dir() else None
    tree: dict[str, object] = {"siblings": siblings}
    if not root.exists():
        return tree
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        tree[rel] = path.read_bytes() if path.is_file() else "dir"
    return tree


def leaked(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and SECRET in p.read_bytes()]


def fails_cleanly(run, out: Path, expected: str) -> str:
    before = snapshot(out)
    with pytest.raises(EnvError) as caught:
        run()
    message = str(caught.value)
    assert "\n" not in message and expected in message, message
    assert snapshot(out) == before
    if out.is_dir():
        assert not leaked(out)
    return message


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_bytes(SECRET)
    return folder


# ------------------------------------------------------------------------------ DocVQA
def docvqa_rows(image_of=lambda i: {"bytes": base64.b64encode(PNG).decode()}):
    return [
        {"questionId": i, "question": f"q {i}?", "answers": ["a"], "image": image_of(i)}
        for i in ALL_IDS
    ]


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


@pytest.fixture
def docvqa_setup(tmp_path):
    """A manifest and a good earlier materialisation at `out`."""
    manifest = write_manifest(tmp_path / "manifest")
    write_jsonl(tmp_path / "good" / "rows.jsonl", docvqa_rows())
    out = tmp_path / "data" / "docvqa"
    docvqa(tmp_path / "good", out, manifest)
    return manifest, out


@pytest.mark.parametrize(
    "image_path", ["../outside/secret.txt", "{outside}/secret.txt", "/etc/hostname"]
)
def test_docvqa_image_path_outside_the_source_is_refused(
    tmp_path, docvqa_setup, outside, image_path
):
    manifest, out = docvqa_setup
    named = image_path.format(outside=outside)
    rows = docvqa_rows(lambda i: {"path": named} if i == "v1" else {"path": "ok.png"})
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", rows).parent
    (src / "ok.png").write_bytes(PNG)
    message = fails_cleanly(lambda: docvqa(src, out, manifest), out, repr(named))
    assert "outside" in message or "absolute" in message


def test_docvqa_image_symlink_out_of_the_source_is_refused(tmp_path, docvqa_setup, outside):
    manifest, out = docvqa_setup
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows(lambda i: {"path": "p.png"}))
    src = src.parent
    (src / "p.png").symlink_to(outside / "secret.txt")
    fails_cleanly(lambda: docvqa(src, out, manifest), out, "points outside --source")


def test_docvqa_image_symlink_inside_the_source_is_followed(tmp_path, outside):
    manifest = write_manifest(tmp_path / "manifest")
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows(lambda i: {"path": "p.png"}))
    src = src.parent
    (src / "real").mkdir()
    (src / "real" / "page.png").write_bytes(PNG)
    (src / "p.png").symlink_to("real/page.png")
    report = docvqa(src, tmp_path / "out", manifest)
    assert report.files == 4 and (tmp_path / "out" / "images" / "qt1.png").read_bytes() == PNG


def test_docvqa_record_file_symlinked_from_outside_is_not_read(tmp_path, outside):
    manifest = write_manifest(tmp_path / "manifest")
    write_jsonl(outside / "rows.jsonl", docvqa_rows())
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "rows.jsonl").symlink_to(outside / "rows.jsonl")
    out = tmp_path / "out"
    fails_cleanly(lambda: docvqa(tmp_path / "src", out, manifest), out, "no records found")


def test_a_bad_val_row_leaves_the_earlier_data_whole(tmp_path, docvqa_setup):
    """The reported mix: train/ from the new source beside val/ from the old one."""
    manifest, out = docvqa_setup
    rows = docvqa_rows()
    for row in rows:
        row["question"] = "NEW SOURCE"
    next(r for r in rows if r["questionId"] == "v1")["image"] = {"bytes": "%%% not base64"}
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", rows).parent
    fails_cleanly(lambda: docvqa(src, out, manifest), out, "not valid base64")
    assert b"NEW SOURCE" not in (out / "train" / "items.json").read_bytes()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b'{"questionId": "t1", "question": ', "malformed JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"questionId": "t1", "image": {"bytes": 7}, "question": "q"}', "expected base64"),
        (b'{"questionId": "t1", "image": {"bytes": "AAAA"}}', "'question' is missing"),
        (b'{"questionId": "t1", "image": {"bytes": "AAAA"}, "question": {"a": 1}}', "a dict"),
        (b'{"questionId": "t1", "image": {"path": 5}, "question": "q"}', "not a file name"),
        (b'{"questionId": "t1", "image": {"path": "dir"}, "question": "q"}', "not a regular"),
        (b'{"questionId": "t1", "image": "x.png", "question": "q"}', "has no image"),
    ],
)
def test_docvqa_malformed_inputs_are_one_line(tmp_path, docvqa_setup, content, expected):
    manifest, out = docvqa_setup
    src = tmp_path / "src"
    (src / "dir").mkdir(parents=True)
    if content.startswith(b"{"):
        rest = [r for r in docvqa_rows() if r["questionId"] != "t1"]
        content = content + b"\n" + "\n".join(json.dumps(r) for r in rest).encode()
    (src / "rows.jsonl").write_bytes(content)
    fails_cleanly(lambda: docvqa(src, out, manifest), out, expected)


# ------------------------------------------------------------------------------ OfficeQA
def test_officeqa_error_leaves_no_docs_written(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    src = officeqa_source(tmp_path / "src")
    csv_text = (src / "officeqa_full.csv").read_text()
    lines = csv_text.splitlines()
    lines[-1] = lines[-1].replace("treasury_bulletin_1944_01.txt", "treasury_bulletin_2099_01.txt")
    (src / "officeqa_full.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "data" / "officeqa"
    fails_cleanly(lambda: officeqa(src, out, manifest), out, "treasury_bulletin_2099_01.txt")
    assert not out.exists() and not (tmp_path / "data").exists()


def test_officeqa_document_symlinked_out_of_the_source_is_not_copied(tmp_path, outside):
    manifest = write_manifest(tmp_path / "manifest")
    src = officeqa_source(tmp_path / "src")
    doc = src / "docs" / "1944" / "treasury_bulletin_1944_01.txt"
    doc.unlink()
    (outside / "secret.txt").rename(outside / "treasury_bulletin_1944_01.txt")
    doc.symlink_to(outside / "treasury_bulletin_1944_01.txt")
    (outside / "treasury_bulletin_1944_01.txt").write_bytes(SECRET)
    out = tmp_path / "out"
    fails_cleanly(lambda: officeqa(src, out, manifest), out, "which is not under")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"uid,question\n\xff\xfe,x\n", "not UTF-8"),
        (b'uid,question\nt1,"' + b"x" * 200_000 + b'"\n', "malformed CSV"),
    ],
)
def test_officeqa_malformed_csv_is_one_line(tmp_path, content, expected):
    manifest = write_manifest(tmp_path / "manifest")
    src = officeqa_source(tmp_path / "src")
    (src / "officeqa_full.csv").write_bytes(content)
    out = tmp_path / "out"
    fails_cleanly(lambda: officeqa(src, out, manifest), out, expected)


# ------------------------------------------------------------------------------ LiveMath
def livemath_question(no: int, choices) -> dict:
    return {"month": "202511", "no": no, "mcq": {"question": "q", "choices": choices}}


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([livemath_question(1, [str(n) for n in range(11)])], "at most 10"),
        ([livemath_question(1, 5)], "choices must be"),
        (["not a question"], "a str, expected an object"),
    ],
)
def test_livemath_malformed_questions_are_one_line(tmp_path, rows, expected):
    manifest = write_manifest(tmp_path / "manifest", {"train": ["202511:1"], "val": [], "test": []})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "qa_202511_final.json").write_text(json.dumps(rows))
    out = tmp_path / "out"
    fails_cleanly(lambda: livemath(tmp_path / "src", out, manifest), out, expected)


def test_livemath_non_utf8_file_is_one_line(tmp_path):
    manifest = write_manifest(tmp_path / "manifest", {"train": ["202511:1"], "val": [], "test": []})
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "qa_202511_final.json").write_bytes(b"[\xff]")
    out = tmp_path / "out"
    fails_cleanly(lambda: livemath(tmp_path / "src", out, manifest), out, "not UTF-8")


# ------------------------------------------------------------------------------ SearchQA
@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [("answers", None, "no 'answers'"), ("question", ["a"], "a list"), ("answers", [{}], "texts")],
)
def test_searchqa_malformed_rows_are_one_line(tmp_path, field, value, expected):
    manifest = write_manifest(tmp_path / "manifest")
    rows = [{"key": i, "question": "q", "context": "c", "answers": ["a"]} for i in ALL_IDS]
    if value is None:
        del rows[0][field]
    else:
        rows[0][field] = value
    source = write_jsonl(tmp_path / "src.jsonl", rows)
    out = tmp_path / "out"
    fails_cleanly(lambda: searchqa(source, out, manifest), out, expected)


# ------------------------------------------------------------------------------ the data dir
def test_out_that_is_a_file_is_refused_and_kept(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows()).parent
    out = tmp_path / "out"
    out.write_text("my notes")
    fails_cleanly(lambda: docvqa(src, out, manifest), out, "is not a folder")
    assert out.read_text() == "my notes"


def test_out_under_a_file_is_refused(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows()).parent
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "afile" / "docvqa"
    with pytest.raises(EnvError, match="cannot write under"):
        docvqa(src, out, manifest)
    assert (tmp_path / "afile").read_text() == "x"


def test_out_holding_other_files_is_refused(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows()).parent
    out = tmp_path / "home"
    (out / "Documents").mkdir(parents=True)
    (out / "Documents" / "thesis.txt").write_text("years of work")
    fails_cleanly(lambda: docvqa(src, out, manifest), out, "not materialised data")


def test_out_inside_the_source_is_refused(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", docvqa_rows()).parent
    out = src / "data"
    fails_cleanly(lambda: docvqa(src, out, manifest), out, "overlap")


def test_a_second_materialisation_replaces_the_first_whole(tmp_path, docvqa_setup):
    manifest, out = docvqa_setup
    (out / "images" / "stale.png").write_bytes(PNG)  # a file the new source does not have
    rows = docvqa_rows()
    for row in rows:
        row["question"] = "NEW SOURCE"
    src = write_jsonl(tmp_path / "src" / "rows.jsonl", rows).parent
    docvqa(src, out, manifest)
    assert not (out / "images" / "stale.png").exists()
    for split in ("train", "val", "test"):
        assert b"NEW SOURCE" in (out / split / "items.json").read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["docvqa"]


def test_a_tarball_is_not_a_docvqa_source(tmp_path):
    """A garbage file given as the records file is reported, not parsed as records."""
    manifest = write_manifest(tmp_path / "manifest")
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        info = tarfile.TarInfo("x.json")
        tar.addfile(info, io.BytesIO(b""))
    source = tmp_path / "rows.json"
    source.write_bytes(data.getvalue())
    out = tmp_path / "out"
    fails_cleanly(lambda: docvqa(source, out, manifest), out, "not UTF-8")


def test_source_that_is_a_fifo_is_refused(tmp_path):
    manifest = write_manifest(tmp_path / "manifest")
    fifo = tmp_path / "rows.jsonl"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    fails_cleanly(lambda: searchqa(fifo, out, manifest), out, "not a regular file or folder")
