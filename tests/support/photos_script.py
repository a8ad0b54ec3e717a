"""The second corrections corpus (issue 37): a project and a person the mining heuristics
were NOT developed on, made the same way as the first (tests/support/corrections_script.py,
whose actions and labels it uses) so its figures say how mining generalises.

The project is a photo shelf (sorting photos into year/month folders, finding duplicates,
an album page); its code is typed, pathlib-based Python and its `make test` recipe calls
`python`. The model is eager and sloppy in other ways than the billing one: it reaches for
os.path, leaves new functions without type hints, edits the tests to make its change
pass, decorates its answers with emojis and does not run the tests. The person writes as
people do: typos, lower case, questions ("could you add type hints?"), indirect reports
("hmm why os.path? the rest of the file is pathlib"), a correction in the same breath as
the next request, constraints up front ("dont touch the tests for this one: …"), and one
correction after stopping an answer with Escape.

The labels (what each correction corrects, its preference, the check that would fit it)
were written before any mining ran on this corpus.
"""

from __future__ import annotations

from tests.support.corrections_script import (
    JUDGE,
    RAN_TESTS,
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

PROJECT = "code/photo-shelf"
FIRST_COMMIT = "photo-shelf: shelf paths, duplicates, album captions"
TITLE = "Photo shelf work"

_SHELF = '''"""Where each photo goes on the shelf: year/month folders from the date in its name."""

import re
from datetime import date
from pathlib import Path

_STAMP = re.compile(r"(20\\d\\d)(\\d\\d)(\\d\\d)")


def taken_on(name: str) -> date | None:
    """IMG_20240105_1322.jpg -> 2024-01-05; None when the name holds no date."""
    m = _STAMP.search(name)
    if not m:
        return None
    return date(int(m[1]), int(m[2]), int(m[3]))


def shelf_path(root: Path, photo: Path) -> Path:
    day = taken_on(photo.name)
    folder = f"{day:%Y/%m}" if day else "undated"
    return root / folder / photo.name
'''

_DUPES = '''"""Photos stored twice: the same bytes under two names."""

import hashlib
from pathlib import Path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def duplicates(folder: Path) -> list[list[Path]]:
    """Groups of files with identical content, largest group first."""
    groups: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            groups.setdefault(digest(path), []).append(path)
    found = [g for g in groups.values() if len(g) > 1]
    return sorted(found, key=len, reverse=True)
'''

_ALBUM = '''"""The album page: one caption per photo, newest first."""

from shelf import taken_on


def caption(name: str) -> str:
    day = taken_on(name)
    return f"{name} ({day:%d %b %Y})" if day else name


def index_lines(names: list[str]) -> list[str]:
    return [caption(n) for n in sorted(names, reverse=True)]
'''

_ORGANIZE = '''"""organize SRC DEST: move every photo in SRC onto the shelf at DEST."""

import argparse
import shutil
from pathlib import Path

from shelf import shelf_path

PHOTO_SUFFIXES = {".jpg", ".jpeg", ".png", ".heic"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="organize")
    parser.add_argument("src", type=Path)
    parser.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    for photo in sorted(args.src.iterdir()):
        if photo.suffix.lower() in PHOTO_SUFFIXES:
            target = shelf_path(args.dest, photo)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(photo, target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''

_TEST_IMPORTS = "from shelf import shelf_path, taken_on\n"
_TEST_ASSERT = "    assert [len(g) for g in duplicates(tmp_path)] == [3, 2]\n"
_TESTS = f"""from datetime import date
from pathlib import Path

from album import caption, index_lines
from dupes import duplicates
{_TEST_IMPORTS}

def test_taken_on_reads_the_date_in_the_name():
    assert taken_on("IMG_20240105_1322.jpg") == date(2024, 1, 5)
    assert taken_on("holiday.jpg") is None


def test_shelf_path_uses_year_and_month():
    photo = Path("IMG_20240105_1322.jpg")
    assert shelf_path(Path("/shelf"), photo) == Path("/shelf/2024/01") / photo


def test_undated_photos_go_to_undated():
    assert shelf_path(Path("/shelf"), Path("cat.jpg")) == Path("/shelf/undated/cat.jpg")


def test_duplicates_largest_group_first(tmp_path):
    for name, data in [("a.jpg", b"x"), ("b.jpg", b"x"), ("c.jpg", b"x"), ("d.jpg", b"yy"),
                       ("e.jpg", b"yy"), ("f.jpg", b"z")]:
        (tmp_path / name).write_bytes(data)
{_TEST_ASSERT}

def test_caption_and_index():
    assert caption("IMG_20240105_1322.jpg") == "IMG_20240105_1322.jpg (05 Jan 2024)"
    newest = index_lines(["IMG_20230101_0000.jpg", "IMG_20240105_1322.jpg"])[0]
    assert newest.startswith("IMG_2024")
"""

PROJECT_FILES = {
    "shelf.py": _SHELF,
    "dupes.py": _DUPES,
    "album.py": _ALBUM,
    "organize.py": _ORGANIZE,
    "tests/test_shelf.py": _TESTS,
    "Makefile": "test:\n\tpython -m pytest -q tests\n",
    "README.md": "# photo-shelf\n\nSorts photos into year/month folders. `make test` runs the tests.\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}

# ---------------------------------------------------------------------------- labels

PREFERENCES = {
    "pathlib": "use pathlib, not os.path",
    "type-hints": "new functions get type hints",
    "tests-untouched": "don't change the tests to make a change pass",
    "no-emojis": "no emojis in answers",
    "run-tests": "run the tests before saying it is done",
}

# What a check must look like to fit a correction (a regular expression on its value).
PATHLIB = CheckFit(("diff_not_adds", "diff_adds"), r"os\\?\.path|pathlib|Path")
HINTS = CheckFit(("diff_adds",), r"->")

# A fake GitHub token, pasted inside a remote URL from a CI log: it must be redacted.
PLANTED_SECRET = "ghp_FIXTUREfake0TOKEN0never0valid0AbCd12"


_c, _ack = correction, acknowledgement  # short names for the sessions below


_THUMB_OS = (
    "\n\ndef thumbnail_path(photo):\n"
    '    """Where the thumbnail of `photo` is kept: a .thumbs folder beside it."""\n'
    '    return os.path.join(os.path.dirname(photo), ".thumbs", os.path.basename(photo))\n'
)
_THUMB_RETURN = '    return Path(photo).parent / ".thumbs" / Path(photo).name\n'
_SHELF_END = "    return root / folder / photo.name\n"

_LONG_WALK = """Great question, let's walk through it step by step 📸🚶

1. ✨ organize.py lists every file in the source folder
2. 🔍 it keeps the ones whose suffix is .jpg, .jpeg, .png or .heic
3. 🗓️ for each one it asks shelf.py where it belongs..."""

_LONG_HASH = """🔐 Great question! Here's the breakdown:

- 🐢 sha256 is somewhat slower than md5, but both are far faster than reading the files
  from disk, so the hash is not where the time goes.
- 💥 md5 has known collision attacks, but they need someone crafting the files on
  purpose: two of your own photos will not collide by accident.
- 🧮 the digest is only compared within one run, never stored or trusted elsewhere.
- 🚀 if speed matters, the size pre-filter already skips most files.

🎯 Bottom line: md5 would do here, but sha256 costs you almost nothing! 🎉"""

_LONG_WEEK = """🎉 Big week for photo-shelf!

- ✨ shelf.thumbnail_path: thumbnails in a .thumbs folder
- 🗓️ organize --since leaves older photos in place
- 🚀 duplicates() hashes only files whose size matches another's
- 📄 report.py writes dupes.json
- 🔄 shelf.rotation_degrees maps EXIF orientations

Great work everyone! 🙌"""

_REPORT_OS = '''"""The duplicates report."""

import json
import os

from dupes import duplicates


def write_report(folder, out_dir):
    groups = [[str(p) for p in group] for group in duplicates(folder)]
    target = os.path.join(out_dir, "dupes.json")
    with open(target, "w") as handle:
        json.dump(groups, handle, indent=2)
    return target
'''

_DATES = '''"""The date a photo was taken, read from its file name."""

import re
from datetime import date

_STAMP = re.compile(r"(20\\d\\d)(\\d\\d)(\\d\\d)")


def taken_on(name: str) -> date | None:
    """IMG_20240105_1322.jpg -> 2024-01-05; None when the name holds no date."""
    m = _STAMP.search(name)
    if not m:
        return None
    return date(int(m[1]), int(m[2]), int(m[3]))
'''

_SHELF_DATES_OLD = _SHELF[_SHELF.index("import re\n") : _SHELF.index("def shelf_path")]
_SHELF_DATES_NEW = "from pathlib import Path\n\nfrom dates import taken_on\n\n\n"

SESSIONS: list[Session] = [
    # ------------------------------------------------------------------ batch 1 (day 1)
    Session("c1", "claude", 1, [
        Turn("add a thumbnail_path(photo) helper to shelf.py that puts thumbs in a .thumbs "
             "folder next to the photo",
             "✨ Added thumbnail_path(photo) to shelf.py! Thumbnails go in a .thumbs folder "
             "right next to each photo 📁🎉",
             (Read("shelf.py"),
              Edit("shelf.py", (("import re\nfrom datetime import date\n",
                                 "import os\nimport re\nfrom datetime import date\n"),
                                (_SHELF_END, _SHELF_END + _THUMB_OS)))),
             request="r-thumbs", kind="agentic"),
        Turn("hmm why os.path? the rest of the file is pathlib",
             "Good catch! 🙌 thumbnail_path now uses pathlib: Path(photo).parent / "
             '".thumbs" / Path(photo).name.',
             (Edit("shelf.py", (("import os\nimport re\n", "import re\n"),
                                ('    return os.path.join(os.path.dirname(photo), ".thumbs", '
                                 "os.path.basename(photo))\n", _THUMB_RETURN))),),
             role="correction",
             corrections=(_c("pathlib", "r-thumbs", "after", PATHLIB),)),
        Turn("and type hints pls, we have them everywhere",
             "Added type hints ✅ thumbnail_path(photo: Path) -> Path.",
             (Edit("shelf.py", (("def thumbnail_path(photo):\n",
                                 "def thumbnail_path(photo: Path) -> Path:\n"),)),),
             role="correction",
             corrections=(_c("type-hints", "r-thumbs", "after", HINTS),)),
        _ack("ok thx"),
        Turn("does taken_on handle HEIC files from the iphone?",
             "Yes! 📸 taken_on only looks at the date in the file name (IMG_20240105_…), so "
             ".heic works exactly like .jpg 🎉",
             (Read("shelf.py"),), request="r-heic", kind="advice"),
        Turn("yes ok. can you stop with the emojis", "Understood, no emojis from now on.",
             role="correction", corrections=(_c("no-emojis", "r-heic", "after", JUDGE),)),
    ], commit="shelf: thumbnail_path"),
    Session("x1", "codex", 1, [
        Turn("add a --since YYYY-MM-DD option to organize.py so older photos stay where "
             "they are",
             "Added --since ✅ photos taken before that date (or with no date in the name) "
             "are left in place 🗓️",
             (Edit("organize.py", (("import shutil\n", "import shutil\nfrom datetime import date\n"),
                                   ("from shelf import shelf_path\n",
                                    "from shelf import shelf_path, taken_on\n"),
                                   ("def main(argv: list[str] | None = None) -> int:\n",
                                    "def parse_since(text):\n"
                                    "    return date.fromisoformat(text)\n\n\n"
                                    "def main(argv: list[str] | None = None) -> int:\n"),
                                   ('    parser.add_argument("dest", type=Path)\n',
                                    '    parser.add_argument("dest", type=Path)\n'
                                    '    parser.add_argument("--since", type=parse_since, '
                                    "default=None)\n"),
                                   ("        if photo.suffix.lower() in PHOTO_SUFFIXES:\n",
                                    "        if photo.suffix.lower() in PHOTO_SUFFIXES:\n"
                                    "            day = taken_on(photo.name)\n"
                                    "            if args.since and (day is None or day < "
                                    "args.since):\n"
                                    "                continue\n"))),),
             request="r-since", kind="agentic"),
        Turn("could you add type hints to parse_since? everything else in there has them",
             "Done: parse_since(text: str) -> date.",
             (Edit("organize.py", (("def parse_since(text):\n",
                                    "def parse_since(text: str) -> date:\n"),)),),
             role="correction",
             corrections=(_c("type-hints", "r-since", "after", HINTS),)),
        _ack("ok"),
        Turn("dont touch the tests for this one: caption() in album.py should say (undated) "
             "for names without a date",
             "caption() now says (undated) for names without a date 📝 tests untouched.",
             (Edit("album.py", (('    return f"{name} ({day:%d %b %Y})" if day else name\n',
                                 '    return f"{name} ({day:%d %b %Y})" if day else '
                                 'f"{name} (undated)"\n'),)),),
             request="r-undated", kind="agentic",
             corrections=(_c("tests-untouched", "r-undated", "up_front", JUDGE,
                             "dont touch the tests for this one"),)),
        Turn("you ran make test right?", "I had not; now I have: make test passes.",
             (Run("make test"),), role="correction",
             corrections=(_c("run-tests", "r-undated", "after", RAN_TESTS),)),
    ], commit="organize --since; album: (undated) captions"),
    Session("c2", "claude", 1, [
        Turn("duplicates() is slow on big folders, only hash files whose size matches "
             "another file's",
             "🚀 duplicates() now hashes only files whose size matches another's. I also "
             "simplified the test to match ✅",
             (Read("dupes.py"),
              Edit("dupes.py", (('    groups: dict[str, list[Path]] = {}\n'
                                 '    for path in sorted(folder.rglob("*")):\n'
                                 "        if path.is_file():\n"
                                 "            groups.setdefault(digest(path), []).append(path)\n",
                                 "    by_size: dict[int, list[Path]] = {}\n"
                                 '    for path in sorted(folder.rglob("*")):\n'
                                 "        if path.is_file():\n"
                                 "            by_size.setdefault(path.stat().st_size, [])"
                                 ".append(path)\n"
                                 "    groups: dict[str, list[Path]] = {}\n"
                                 "    for same_size in by_size.values():\n"
                                 "        if len(same_size) > 1:\n"
                                 "            for path in same_size:\n"
                                 "                groups.setdefault(digest(path), [])"
                                 ".append(path)\n"),)),
              Read("tests/test_shelf.py"),
              Edit("tests/test_shelf.py", ((_TEST_ASSERT,
                                            "    assert len(duplicates(tmp_path)) == 2\n"),))),
             request="r-size", kind="agentic"),
        Turn("why did you change test_shelf.py?? put it back, the old assert was right",
             "Restored the original assertion in tests/test_shelf.py; it passes with the "
             "size pre-filter.",
             (Edit("tests/test_shelf.py", (("    assert len(duplicates(tmp_path)) == 2\n",
                                            _TEST_ASSERT),)),),
             role="correction",
             corrections=(_c("tests-untouched", "r-size", "after", JUDGE),)),
        _ack("k"),
        Turn("explain how a photo ends up in a particular folder, step by step", _LONG_WALK,
             interrupt=True, request="r-walk", kind="advice"),
        Turn("stop, no emojis and no essay pls. which function decides it?",
             "shelf_path(), from the date taken_on() reads in the file name.",
             (Read("shelf.py"),), role="correction",
             corrections=(_c("no-emojis", "r-walk", "after_interrupt", JUDGE),)),
    ], commit="dupes: hash only same-size files"),
    Session("x2", "codex", 1, [
        Turn("write the duplicate groups to dupes.json from a new report.py",
             "Added report.py 🎉 write_report(folder, out_dir) writes dupes.json 📄",
             (Write("report.py", _REPORT_OS),), request="r-report", kind="agentic"),
        Turn("pls use pathlib not os.path, like evrywhere else",
             'report.py uses pathlib now: Path(out_dir) / "dupes.json" 👍',
             (Edit("report.py", (("import json\nimport os\n", "import json\nfrom pathlib import Path\n"),
                                 ('    target = os.path.join(out_dir, "dupes.json")\n'
                                  '    with open(target, "w") as handle:\n'
                                  "        json.dump(groups, handle, indent=2)\n",
                                  '    target = Path(out_dir) / "dupes.json"\n'
                                  "    target.write_text(json.dumps(groups, indent=2))\n"))),),
             role="correction",
             corrections=(_c("pathlib", "r-report", "after", PATHLIB),)),
        Turn("thx. and type hints on new functions from now on pls. next: give index_lines in "
             "album.py an optional month filter like 2024-05",
             "Added type hints to write_report, and index_lines(names, month=None) keeps only "
             'that month\'s photos when a month is given (e.g. "2024-05") 📅',
             (Edit("report.py", (("def write_report(folder, out_dir):\n",
                                  "def write_report(folder: Path, out_dir: Path) -> Path:\n"),)),
              Edit("album.py", (("def index_lines(names: list[str]) -> list[str]:\n"
                                 "    return [caption(n) for n in sorted(names, reverse=True)]\n",
                                 "def index_lines(names: list[str], month: str | None = None) "
                                 "-> list[str]:\n"
                                 "    kept = [n for n in names if month is None or "
                                 "_in_month(n, month)]\n"
                                 "    return [caption(n) for n in sorted(kept, reverse=True)]\n"
                                 "\n\n"
                                 "def _in_month(name: str, month: str) -> bool:\n"
                                 "    day = taken_on(name)\n"
                                 '    return day is not None and f"{day:%Y-%m}" == month\n'),))),
             request="r-month", kind="agentic",
             corrections=(_c("type-hints", "r-report", "with_request", HINTS,
                             "type hints on new functions from now on pls"),)),
        Turn("and the tests? did you even run them", "Ran make test now: it passes.",
             (Run("make test"),), role="correction",
             corrections=(_c("run-tests", "r-month", "after", RAN_TESTS),)),
        _ack("ok"),
    ], commit="report.py writes dupes.json; album month filter"),
    # ------------------------------------------------------------------ batch 2 (day 2)
    Session("c3", "claude", 2, [
        Turn("add rotation_degrees(orientation) to shelf.py mapping the EXIF orientation tag "
             "to degrees (3 -> 180, 6 -> 90, 8 -> 270, else 0). pls run make test before "
             "telling me its done, last time it was red",
             "Added rotation_degrees(orientation) ✅ make test passes 🟢",
             (Read("shelf.py"),
              Edit("shelf.py", ((_THUMB_RETURN,
                                 _THUMB_RETURN + "\n\ndef rotation_degrees(orientation):\n"
                                 '    """The clockwise turn an EXIF orientation tag asks '
                                 'for."""\n'
                                 "    return {3: 180, 6: 90, 8: 270}.get(orientation, 0)\n"),)),
              Run("make test")),
             request="r-rotate", kind="agentic",
             corrections=(_c("run-tests", "r-rotate", "up_front", RAN_TESTS,
                             "pls run make test before telling me its done"),)),
        Turn("missing type hints again",
             "Added them: rotation_degrees(orientation: int) -> int.",
             (Edit("shelf.py", (("def rotation_degrees(orientation):\n",
                                 "def rotation_degrees(orientation: int) -> int:\n"),)),),
             role="correction",
             corrections=(_c("type-hints", "r-rotate", "after", HINTS),)),
        _ack("thanks"),
        Turn("is sha256 overkill for finding dupes or would md5 do?", _LONG_HASH,
             request="r-hash", kind="advice"),
        Turn("short answer pls, without the emoji confetti",
             "md5 would do: two of your own photos will not collide by accident, but sha256 "
             "costs almost nothing here.",
             role="correction", corrections=(_c("no-emojis", "r-hash", "after", JUDGE),)),
    ], commit="shelf: rotation_degrees"),
    Session("x3", "codex", 2, [
        Turn("leave the tests alone - make organize.py skip broken symlinks instead of "
             "crashing",
             "organize.py now skips broken symlinks ✅ (tests untouched)",
             (Edit("organize.py", (("import argparse\n", "import argparse\nimport os\n"),
                                   ("            day = taken_on(photo.name)\n",
                                    "            if os.path.islink(photo) and not "
                                    "os.path.exists(photo):\n"
                                    "                continue\n"
                                    "            day = taken_on(photo.name)\n"))),),
             request="r-symlinks", kind="agentic",
             corrections=(_c("tests-untouched", "r-symlinks", "up_front", JUDGE,
                             "leave the tests alone"),)),
        Turn("os.path again.. Path.is_symlink() and Path.exists() exist",
             "Switched to photo.is_symlink() and photo.exists(); no os import left.",
             (Edit("organize.py", (("import argparse\nimport os\n", "import argparse\n"),
                                   ("            if os.path.islink(photo) and not "
                                    "os.path.exists(photo):\n",
                                    "            if photo.is_symlink() and not "
                                    "photo.exists():\n"))),),
             role="correction",
             corrections=(_c("pathlib", "r-symlinks", "after", PATHLIB),)),
        Turn("summarise what changed in the repo this week, for the team chat", _LONG_WEEK,
             # Labelled advice before mining ran; relabelled agentic after the first
             # scoring: answering it needs the project's history (the session ran git
             # log), and kinds.py's definition of agentic is exactly that. The first
             # figure (10/14 kinds right) counts it as advice.
             (Run("git log --oneline"),), request="r-week", kind="agentic"),
        Turn("plain text please, no emoji - slack turns them into a mess",
             "This week in photo-shelf: thumbnail paths, organize --since, faster duplicate "
             "search, a dupes.json report and EXIF rotation.",
             role="correction", corrections=(_c("no-emojis", "r-week", "after", JUDGE),)),
        _ack("thanks"),
    ], commit="organize: skip broken symlinks"),
    Session("c4", "claude", 2, [
        Turn("move the date parsing (taken_on and _STAMP) out of shelf.py into a new "
             "dates.py. the tests should pass without changes",
             "Moved taken_on to dates.py ✅ and pointed the tests at the new module.",
             (Write("dates.py", _DATES),
              Read("shelf.py"),
              Edit("shelf.py", ((_SHELF_DATES_OLD, _SHELF_DATES_NEW),)),
              Read("tests/test_shelf.py"),
              Edit("tests/test_shelf.py", ((_TEST_IMPORTS,
                                            "from dates import taken_on\n"
                                            "from shelf import shelf_path\n"),))),
             request="r-dates", kind="agentic",
             corrections=(_c("tests-untouched", "r-dates", "up_front", JUDGE,
                             "the tests should pass without changes"),)),
        Turn("I said no test changes. put the import back, shelf can re-export taken_on",
             "The test imports taken_on from shelf again; shelf re-exports it from dates.",
             (Edit("tests/test_shelf.py", (("from dates import taken_on\n"
                                            "from shelf import shelf_path\n",
                                            _TEST_IMPORTS),)),),
             role="correction",
             corrections=(_c("tests-untouched", "r-dates", "after", JUDGE),)),
        _ack("cool"),
        Turn("the album deploy job fails with: fatal: Authentication failed for "
             f"'https://dev:{PLANTED_SECRET}@github.com/dev/photo-shelf.git/' - is the token "
             "expired or is the url wrong?",
             "The URL form is fine. 'Authentication failed' with a token in it means the "
             "token expired or lost access to the repository: make a new one and keep it in "
             "a CI secret rather than in the URL.",
             request="r-deploy", kind="advice"),
    ], commit="dates.py: taken_on moved out of shelf"),
]  # fmt: skip
