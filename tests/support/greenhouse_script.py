"""The fourth corrections corpus (issue 37): held out. The recipes corpus (recipes_script.py)
became a development corpus once mining was fixed against its misses; this one is
labelled before mining runs on it and is never fixed against, so its figures are the
generalisation figure of the mining that was.

The project is a greenhouse logger (sensor readings, frost and staleness alerts, a daily
report) in typed Python, tested by a `make test` whose recipe calls `python`. The model
compares naive local times with the sensors' UTC ones, returns None where bad input should
raise, and changes code without a test. The person writes tersely, with typos: "datetime.now()
with no tz??", "test?", "you didnt add a test for …", a constraint up front ("all
timestamps in UTC please: …", "always add a test with the change - …"), a correction and
the next request in one prompt, and one correction after stopping an explanation with
Escape. Four preferences, three of them kinds no earlier corpus has (UTC times, raise on
bad input, a test with every change).
"""

from __future__ import annotations

from tests.support.corrections_script import (
    SHORT,
    YES_NO,
    CheckFit,
    Edit,
    Read,
    Run,
    Session,
    Turn,
    Write,
    acknowledgement,
    correction,
)

PROJECT = "projects/greenhouse"
FIRST_COMMIT = "greenhouse: readings, alerts, daily report"
TITLE = "Greenhouse logger"

_SENSORS = '''"""Readings from the greenhouse sensors."""

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Reading:
    """One sample: when (UTC), which sensor, what it measured."""

    at: datetime
    sensor: str
    celsius: float
    humidity: float


def parse_line(line: str) -> Reading:
    """A log line `2026-05-01T06:00:00+00:00,bench-2,18.5,71` as a Reading."""
    at, sensor, celsius, humidity = line.strip().split(",")
    return Reading(datetime.fromisoformat(at), sensor, float(celsius), float(humidity))
'''

_ALERTS = '''"""When to warn the grower."""

from sensors import Reading

FROST_C = 2.0


def frost_risk(reading: Reading) -> bool:
    """True when a reading is cold enough to hurt seedlings."""
    return reading.celsius <= FROST_C
'''

_REPORT = '''"""The daily summary sent to the grower."""

from sensors import Reading


def daily_mean(readings: list[Reading]) -> float:
    """The mean temperature of a day's readings."""
    return sum(r.celsius for r in readings) / len(readings)
'''

_TESTS = """from datetime import datetime, timezone

from alerts import frost_risk
from report import daily_mean
from sensors import Reading, parse_line

AT = datetime(2026, 5, 1, 6, 0, tzinfo=timezone.utc)


def test_parse_line():
    reading = parse_line("2026-05-01T06:00:00+00:00,bench-2,18.5,71")
    assert reading == Reading(AT, "bench-2", 18.5, 71.0)


def test_frost_risk():
    assert frost_risk(Reading(AT, "door", 1.5, 90.0))
    assert not frost_risk(Reading(AT, "door", 6.0, 90.0))


def test_daily_mean():
    assert daily_mean([Reading(AT, "a", 10.0, 50.0), Reading(AT, "b", 20.0, 50.0)]) == 15.0
"""

PROJECT_FILES = {
    "sensors.py": _SENSORS,
    "alerts.py": _ALERTS,
    "report.py": _REPORT,
    "tests/test_greenhouse.py": _TESTS,
    "Makefile": "test:\n\tpython -m pytest -q\n",
    "README.md": "# greenhouse\n\nLogs the greenhouse sensors and warns about frost. "
    "`make test` runs the tests.\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}

PREFERENCES = {
    "utc": "timestamps are timezone-aware UTC, never naive local time",
    "raise": "bad input raises a clear error, never returns None or an empty result",
    "add-test": "every change comes with a test",
    "short": "short answers",
}

UTC = CheckFit(("diff_adds", "diff_not_adds"), r"utc|UTC|now|tz")
RAISES = CheckFit(("diff_adds",), r"raise")
A_TEST = CheckFit(("diff_adds",), r"test")

# A personal access token pasted from an uploader's error: it must be redacted.
PLANTED_SECRET = "ghp_Fixture0greenhouse0NOT0real0token0Ab12"

_c, _ack = correction, acknowledgement  # short names for the sessions below

_ALERTS_HEAD = "from sensors import Reading\n"
_FROST_END = "    return reading.celsius <= FROST_C\n"
_STALE_NAIVE = (
    "\n\ndef stale(reading: Reading, now: datetime | None = None) -> bool:\n"
    '    """True when the sensor has not reported for over 30 minutes."""\n'
    "    now = now or datetime.now()\n"
    "    return now - reading.at > timedelta(minutes=30)\n"
)
_STALE_TEST = """from datetime import datetime, timedelta, timezone

from alerts import stale
from sensors import Reading

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)


def test_stale_after_thirty_minutes():
    assert stale(Reading(NOW - timedelta(minutes=31), "door", 9.0, 80.0), NOW)
    assert not stale(Reading(NOW - timedelta(minutes=5), "door", 9.0, 80.0), NOW)
"""
_PARSE_BODY = (
    '    at, sensor, celsius, humidity = line.strip().split(",")\n'
    "    return Reading(datetime.fromisoformat(at), sensor, float(celsius), float(humidity))\n"
)
_PARSE_NONE = (
    "    try:\n"
    '        at, sensor, celsius, humidity = line.strip().split(",")\n'
    "        return Reading(datetime.fromisoformat(at), sensor, float(celsius),\n"
    "                       float(humidity) if humidity else None)\n"
    "    except ValueError:\n"
    "        return None\n"
)
_PARSE_RAISE = (
    '    parts = line.strip().split(",")\n'
    "    if len(parts) != 4:\n"
    '        raise ValueError(f"not a reading (time,sensor,celsius,humidity): {line!r}")\n'
    "    at, sensor, celsius, humidity = parts\n"
    "    return Reading(datetime.fromisoformat(at), sensor, float(celsius),\n"
    "                   float(humidity) if humidity else None)\n"
)
_BLANK_TEST = """from sensors import parse_line


def test_blank_humidity_is_none():
    assert parse_line("2026-05-01T06:00:00+00:00,old-1,12.0,").humidity is None
"""
_MEAN_END = "    return sum(r.celsius for r in readings) / len(readings)\n"
_MAX_NONE = (
    "\n\ndef daily_max(readings: list[Reading]) -> float | None:\n"
    '    """The highest temperature of a day\'s readings."""\n'
    "    if not readings:\n"
    "        return None\n"
    "    return max(r.celsius for r in readings)\n"
)
_MAX_TEST = """from datetime import datetime, timezone

from report import daily_max
from sensors import Reading

AT = datetime(2026, 5, 1, 6, 0, tzinfo=timezone.utc)


def test_daily_max():
    assert daily_max([Reading(AT, "a", 10.0, 50.0), Reading(AT, "b", 21.5, 50.0)]) == 21.5
"""
_REPORT_HEAD = "from sensors import Reading\n"
_SINCE = (
    "\n\ndef since(readings: list[Reading], hours: int) -> list[Reading]:\n"
    '    """The readings of the last `hours` hours."""\n'
    "    if hours <= 0:\n"
    "        return []\n"
    "    start = datetime.now(timezone.utc) - timedelta(hours=hours)\n"
    "    return [r for r in readings if r.at >= start]\n"
)
_ALERT_LINE = (
    "\n\ndef alert_line(reading: Reading, kind: str) -> str:\n"
    '    """One line for the alert log: when it fired, which sensor, what."""\n'
    '    return f"{datetime.utcnow():%H:%M} {reading.sensor} {kind}"\n'
)
_LONG_HOURLY = """bench-2 logs every 5 minutes, so 12 readings an hour.

That comes from its firmware interval (300 s), which you can see in the timestamps of any
log: 06:00, 06:05, 06:10 and so on. The older sensors (old-1, old-2) log every 10 minutes,
so they give 6 an hour, and the door sensor only logs when the temperature moves by more
than half a degree, so its count varies from 0 to about 20 an hour."""
_LONG_SUFFIX = """Yes, on Python 3.11 and later. datetime.fromisoformat accepts a trailing Z and
reads it as UTC (+00:00); before 3.11 it only accepted the +00:00 form, so a Z would raise
ValueError. The project's tests run on the interpreter `make test` calls, which is 3.11+
here, so a line like 2026-05-01T06:00:00Z parses to an aware datetime in UTC."""
_LONG_INTERACT = """Good question. They look at different things, so let me go through both.

frost_risk(reading) only reads reading.celsius and compares it with FROST_C (2.0). It has
no notion of time at all. stale(reading, now) only reads reading.at and compares it with
now minus 30 minutes. So when a sensor drops out..."""

SESSIONS: list[Session] = [
    # ------------------------------------------------------------------ batch 1 (day 1)
    Session("c1", "claude", 1, [
        Turn("add a stale(reading, now) check to alerts.py - a sensor is stale when its last "
             "reading is more than 30 min old",
             "Added stale(reading, now) to alerts.py; now defaults to the current time.",
             (Read("alerts.py"),
              Edit("alerts.py", ((_ALERTS_HEAD, "from datetime import datetime, timedelta\n\n"
                                  + _ALERTS_HEAD),
                                 (_FROST_END, _FROST_END + _STALE_NAIVE)))),
             request="r-stale", kind="agentic"),
        Turn("datetime.now() with no tz?? the readings are all UTC, comparing naive with aware "
             "just blows up",
             "stale() now defaults to datetime.now(timezone.utc).",
             (Edit("alerts.py", (("from datetime import datetime, timedelta\n",
                                  "from datetime import datetime, timedelta, timezone\n"),
                                 ("    now = now or datetime.now()\n",
                                  "    now = now or datetime.now(timezone.utc)\n"))),),
             role="correction",
             corrections=(_c("utc", "r-stale", "after", UTC),)),
        Turn("and a test for it pls",
             "Added tests/test_stale.py: 31 minutes is stale, 5 is not. make test passes.",
             (Write("tests/test_stale.py", _STALE_TEST), Run("make test")),
             role="correction",
             corrections=(_c("add-test", "r-stale", "after", A_TEST),)),
        _ack("cheers"),
    ], commit="alerts: stale sensors"),
    Session("x1", "codex", 1, [
        Turn("parse_line should cope with a blank humidity field, some of the old sensors dont "
             "report it",
             "parse_line now reads a blank humidity as None and returns None for a line it "
             "cannot parse.",
             (Edit("sensors.py", (("    humidity: float\n", "    humidity: float | None\n"),
                                  ("def parse_line(line: str) -> Reading:\n",
                                   "def parse_line(line: str) -> Reading | None:\n"),
                                  (_PARSE_BODY, _PARSE_NONE))),),
             request="r-blank", kind="agentic"),
        Turn("returning None on a broken line just hides it, raise a ValueError that says which "
             "line",
             "parse_line raises ValueError naming the line when it is not four fields.",
             (Edit("sensors.py", (("def parse_line(line: str) -> Reading | None:\n",
                                   "def parse_line(line: str) -> Reading:\n"),
                                  (_PARSE_NONE, _PARSE_RAISE))),),
             role="correction",
             corrections=(_c("raise", "r-blank", "after", RAISES),)),
        Turn("you didnt add a test for the blank humidity case",
             "Added tests/test_blank_humidity.py.",
             (Write("tests/test_blank_humidity.py", _BLANK_TEST),),
             role="correction",
             corrections=(_c("add-test", "r-blank", "after", A_TEST),)),
        Turn("how many readings does bench-2 log per hour?", _LONG_HOURLY, (Read("sensors.py"),),
             request="r-hourly", kind="advice"),
        Turn("just the number pls", "12.", role="correction",
             corrections=(_c("short", "r-hourly", "after", SHORT),)),
        _ack("ok ty"),
    ], commit="sensors: blank humidity"),
    Session("c2", "claude", 1, [
        Turn("always add a test with the change - give report.py a daily_max(readings)",
             "Added daily_max(readings) to report.py and tests/test_daily_max.py.",
             (Read("report.py"),
              Edit("report.py", ((_MEAN_END, _MEAN_END + _MAX_NONE),)),
              Write("tests/test_daily_max.py", _MAX_TEST)),
             request="r-max", kind="agentic",
             corrections=(_c("add-test", "r-max", "up_front", A_TEST,
                             "always add a test with the change"),)),
        Turn("hmm None for an empty day? id rather it raised, a None ends up in the report as "
             "'None'",
             "daily_max raises ValueError on an empty list now.",
             (Edit("report.py", (("def daily_max(readings: list[Reading]) -> float | None:\n",
                                  "def daily_max(readings: list[Reading]) -> float:\n"),
                                 ("        return None\n",
                                  '        raise ValueError("no readings for the day")\n'))),),
             role="correction",
             corrections=(_c("raise", "r-max", "after", RAISES),)),
        Turn("does parse_line take a Z at the end of the timestamp?", _LONG_SUFFIX,
             (Read("sensors.py"),), request="r-suffix", kind="advice"),
        Turn("shorter pls, y/n", "Yes.", role="correction",
             corrections=(_c("short", "r-suffix", "after", YES_NO),)),
        _ack("👌"),
    ], commit="report: daily_max"),
    # ------------------------------------------------------------------ batch 2 (day 2)
    Session("x2", "codex", 2, [
        Turn("all timestamps in UTC please: add since(readings, hours) to report.py, the "
             "readings of the last n hours",
             "Added report.since(readings, hours), counting back from now in UTC.",
             (Edit("report.py", ((_REPORT_HEAD, "from datetime import datetime, timedelta, "
                                  "timezone\n\n" + _REPORT_HEAD),
                                 (_MEAN_END, _MEAN_END + _SINCE))),),
             request="r-since", kind="agentic",
             corrections=(_c("utc", "r-since", "up_front", UTC, "all timestamps in UTC please"),)),
        Turn("hours=0 or negative giving [] is a silent bug waiting to happen. raise",
             "since() raises ValueError for hours <= 0.",
             (Edit("report.py", (("        return []\n",
                                  '        raise ValueError(f"hours must be positive, got '
                                  '{hours}")\n'),)),),
             role="correction",
             corrections=(_c("raise", "r-since", "after", RAISES),)),
        Turn("test?", "Added tests/test_since.py for both cases.",
             (Write("tests/test_since.py",
                    "import pytest\n\nfrom report import since\n\n\n"
                    "def test_since_refuses_zero_hours():\n"
                    "    with pytest.raises(ValueError):\n        since([], 0)\n"),),
             role="correction",
             corrections=(_c("add-test", "r-since", "after", A_TEST),)),
        Turn("the uploader says 401 with token " + PLANTED_SECRET + " - is it expired or "
             "missing a scope?",
             "A 401 means the token itself was refused (expired or revoked); a missing scope "
             "gives 403. Make a new token.",
             request="r-401", kind="advice"),
        _ack("thx"),
    ], commit="report: since"),
    Session("c3", "claude", 2, [
        Turn("explain how frost_risk and stale interact when a sensor drops out",
             _LONG_INTERACT, interrupt=True, request="r-interact", kind="advice"),
        Turn("nvm, too long. can a stale sensor ever trigger a frost alert, yes or no?",
             "No: frost_risk reads only the temperature.",
             (Read("alerts.py"),), role="correction",
             corrections=(_c("short", "r-interact", "after_interrupt", YES_NO),)),
        Turn("add alert_line(reading, kind) to alerts.py that formats one line for the alert "
             "log with the time it fired",
             "Added alert_line(reading, kind): 'HH:MM sensor kind'.",
             (Read("alerts.py"),
              Edit("alerts.py", (("    return now - reading.at > timedelta(minutes=30)\n",
                                  "    return now - reading.at > timedelta(minutes=30)\n"
                                  + _ALERT_LINE),))),
             request="r-alert-line", kind="agentic"),
        Turn("utcnow() is naive too, its deprecated. datetime.now(timezone.utc) like stale does",
             "alert_line uses datetime.now(timezone.utc) now.",
             (Edit("alerts.py", (('    return f"{datetime.utcnow():%H:%M} {reading.sensor} '
                                  '{kind}"\n',
                                  '    return f"{datetime.now(timezone.utc):%H:%M} '
                                  '{reading.sensor} {kind}"\n'),)),),
             role="correction",
             corrections=(_c("utc", "r-alert-line", "after", UTC),)),
        Turn("thx. tests with every change pls. next: add heat_stress(reading) to alerts.py, "
             "true above 35C",
             "Added heat_stress(reading) and tests/test_heat.py.",
             (Edit("alerts.py", (("FROST_C = 2.0\n", "FROST_C = 2.0\nHEAT_C = 35.0\n"),
                                 (_FROST_END, _FROST_END + "\n\ndef heat_stress(reading: "
                                  "Reading) -> bool:\n"
                                  '    """True when a reading is hot enough to stress the '
                                  'plants."""\n'
                                  "    return reading.celsius > HEAT_C\n"))),
              Write("tests/test_heat.py",
                    "from datetime import datetime, timezone\n\nfrom alerts import heat_stress\n"
                    "from sensors import Reading\n\n\ndef test_heat_stress():\n"
                    "    at = datetime(2026, 5, 1, tzinfo=timezone.utc)\n"
                    '    assert heat_stress(Reading(at, "roof", 36.0, 40.0))\n'),
              Run("make test")),
             request="r-heat", kind="agentic",
             corrections=(_c("add-test", "r-alert-line", "with_request", A_TEST,
                             "tests with every change pls"),)),
        _ack("perfect"),
    ], commit="alerts: alert lines, heat stress"),
]  # fmt: skip
