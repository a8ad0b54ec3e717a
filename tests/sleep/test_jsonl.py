"""The stream reader survives everything a live or damaged transcript holds."""

import io
import json
import tracemalloc

from core.clean_text import clean_strings
from sleep.harvest.jsonl import SURROGATE_ESCAPE, JsonlReader, clean_text


def read(data: bytes, **kw):
    reader = JsonlReader(io.BytesIO(data), **kw)
    return list(reader.records()), reader


def test_complete_lines_are_read_and_the_offset_stops_after_the_last_one():
    records, reader = read(b'{"a":1}\n{"a":2}\n')
    assert records == [{"a": 1}, {"a": 2}]
    assert reader.offset == 16


def test_a_truncated_last_line_is_pending_not_parsed():
    records, reader = read(b'{"a":1}\n{"a":2')
    assert records == [{"a": 1}]
    assert reader.offset == 8


def test_invalid_utf8_in_one_line_is_replaced_and_the_rest_is_read():
    records, reader = read(b'{"t":"caf\xe9 \xff"}\n{"a":2}\n')
    assert records[0]["t"] == "caf\ufffd \ufffd"
    assert records[1] == {"a": 2}
    assert reader.problems.describe() is None


def test_malformed_and_non_object_lines_are_counted_and_skipped():
    records, reader = read(b'{"a":1}\nnot json\n[1,2]\n\n{"a":2}\n')
    assert records == [{"a": 1}, {"a": 2}]
    assert reader.problems.not_json == 2
    assert "2 line(s) not a JSON object" in reader.problems.describe()
    assert "byte 8" in reader.problems.describe()


def test_a_lone_surrogate_escape_parses_and_is_made_encodable():
    records, _ = read(b'{"t":"x\\ud83dy"}\n')
    text = clean_text(records[0]["t"])
    text.encode("utf-8")
    assert text.startswith("x") and text.endswith("y")


def test_a_line_over_the_cap_is_skipped_without_being_kept():
    big = b'{"t":"' + b"a" * 5_000_000 + b'"}\n'
    data = b'{"a":1}\n' + big + b'{"a":2}\n'
    tracemalloc.start()
    records, reader = read(data, max_line_bytes=1_000_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert records == [{"a": 1}, {"a": 2}]
    assert reader.problems.too_long == 1
    assert reader.offset == len(data)
    assert peak < 4_000_000  # never held the 5 MB line (chunks of 1 MiB at most)


def test_a_multi_megabyte_line_under_the_cap_is_parsed():
    value = "b" * 3_000_000
    records, _ = read(json.dumps({"t": value}).encode() + b"\n")
    assert records[0]["t"] == value


def test_reading_resumes_at_an_offset():
    data = b'{"a":1}\n{"a":2}\n'
    records, reader = read(data, start=8)
    assert records == [{"a": 2}]
    assert reader.offset == 16


# msgspec parses first (sleep/jsonl._loads); every line must read as `json.loads` read it
# before msgspec was added, including where msgspec refuses and `json` takes over, but for
# a lone surrogate escape, which reads as U+FFFD (issue 35: it wedged every later write).
def _as_json_read_it(line: bytes) -> object:
    try:
        value = json.loads(line)
        return clean_strings(value) if SURROGATE_ESCAPE.search(line) else value
    except UnicodeDecodeError:
        try:
            return clean_strings(json.loads(line.decode("utf-8", errors="replace")))
        except ValueError:
            return None
    except ValueError:
        return None


def test_a_lone_surrogate_escape_reads_as_the_replacement_character():
    records, _ = read(b'{"s":"a\\ud83db","t":"\\ud83d\\ude00","\\udcff":1}\n')
    assert records == [{"s": "a\ufffdb", "t": "\U0001f600", "\ufffd": 1}]


EDGE_LINES = [
    b'{"a":1,"a":2}',  # the last duplicate wins
    b'{"n":123456789012345678901234567890}',  # beyond 64 bits (orjson makes it a float)
    b'{"n":-18446744073709551617,"m":18446744073709551616}',
    b'{"f":1e400}',  # json: inf; msgspec refuses
    b'{"f":1.5e-400,"g":2.2250738585072014e-308,"h":-0.0,"i":123.456e2}',
    b'{"s":"\\ud83d"}',  # a lone surrogate escape
    b'{"s":"\\ud83d\\ude00"}',
    b'{"s":"\xed\xa0\xbd"}',  # an encoded surrogate
    b'\xef\xbb\xbf{"a":1}',  # a byte-order mark
    b'{"a":NaN,"b":-Infinity}',
    b'{"t":"caf\xe9 \xff"}',  # invalid UTF-8
    b'{"a":"x\x01"}',  # a raw control character
    b'{"a":1}x',
    b'{"a":01}',
    b'  {"a" : [ true , false , null ] }\r\n',
    b'{"s":"\\u0000\\t\\"\\\\/"}',
    b"[1,2]",
    b'"text"',
    b"{" * 400 + b"}" * 400,  # not an object: a key is missing
    b'{"a":' * 900 + b"1" + b"}" * 900,  # deep, under the recursion limit
]


def test_every_line_reads_as_json_read_it():
    for line in EDGE_LINES:
        records, reader = read(line + b"\n")
        expected = _as_json_read_it(line)
        if isinstance(expected, dict):
            assert records == [expected], line[:60]
            assert repr(records[0]) == repr(expected)  # 1 stays 1, not 1.0; -0.0 stays
        else:
            assert records == [] and reader.problems.not_json == 1, line[:60]


def test_lines_of_real_transcripts_read_as_json_read_them():
    from pathlib import Path

    fixtures = Path(__file__).parent / "fixtures"
    lines = [
        line
        for path in sorted(fixtures.rglob("*.jsonl"))
        for line in path.read_bytes().splitlines()
        if line.strip()
    ]
    assert len(lines) > 100
    for line in lines:
        records, _ = read(line + b"\n")
        expected = _as_json_read_it(line)
        assert records == ([expected] if isinstance(expected, dict) else []), line[:80]
