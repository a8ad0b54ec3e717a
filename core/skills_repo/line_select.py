"""Adopting some changed lines of a hunk, not only whole hunks (`git add -p`'s split and
line selection, for `skillopt skills adopt --lines` and the TUI's `s` / space / `v`).

A hunk's changed lines are numbered 1, 2, … in diff order, counting only its `+` and `-`
lines. Choosing a `-` line removes it; a `-` line not chosen stays. Choosing a `+` line
adds it; a `+` line not chosen is left out. Context lines always stay. Choosing every
changed line of a hunk is the same as choosing the hunk.

The text is rebuilt from the base and staged bytes (never from the diff text), like
`hunks.apply_hunks`, so CRLF endings survive. One case needs a line ending that neither file
has at that spot: a kept line that was the last line without a newline, followed by a chosen
line. It gets the ending of the line that follows it, or the file's own ending.

Selection syntax (`--lines`, and the `Lines:` trailer): `HUNK:LINES`, LINES being numbers
and ranges joined by commas, several groups joined by spaces or `;`: `2:3-5,7 4:1`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from core.skills_repo.errors import AdoptConflict, SkillsRepoError
from core.skills_repo.gitcmd import GitRunner
from core.skills_repo.hunks import merge3, split_lines
from core.skills_repo.types import Hunk

Selection = dict[int, frozenset[int]]  # hunk index → its chosen changed-line numbers


def changed_lines(hunk: Hunk) -> list[int]:
    """1-based positions in `hunk.lines` of its `+`/`-` lines, by changed-line number:
    `changed_lines(h)[n - 1]` is where changed line n is."""
    return [i for i, line in enumerate(hunk.lines) if line[:1] in ("+", "-")]


def change_count(hunk: Hunk) -> int:
    return len(changed_lines(hunk))


def blocks(hunk: Hunk) -> list[frozenset[int]]:
    """The hunk's runs of consecutive changed lines (separated by context), as sets of
    changed-line numbers: what `s` splits a hunk into."""
    runs: list[set[int]] = []
    number, previous_changed = 0, False
    for line in hunk.lines:
        kind = line[:1]
        if kind in ("+", "-"):
            number += 1
            if not previous_changed:
                runs.append(set())
            runs[-1].add(number)
            previous_changed = True
        elif kind == " ":
            previous_changed = False
    return [frozenset(run) for run in runs]


def _ending(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return b"\r\n"
    return b"\n" if line.endswith(b"\n") else b""


def _file_ending(*texts: list[bytes]) -> bytes:
    for lines in texts:
        crlf = sum(1 for line in lines if line.endswith(b"\r\n"))
        lf = sum(1 for line in lines if line.endswith(b"\n")) - crlf
        if crlf or lf:
            return b"\r\n" if crlf > lf else b"\n"
    return b"\n"


def _join(lines: list[bytes], default: bytes) -> bytes:
    out = []
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and not _ending(line):
            line += _ending(lines[i + 1]) or default
        out.append(line)
    return b"".join(out)


def apply_selection(
    base: bytes, head: bytes, hunks: list[Hunk], selection: Mapping[int, Collection[int]]
) -> bytes:
    """`base` with the chosen changed lines of the base→head diff applied, byte-exact.
    A hunk absent from `selection` (or chosen with no line) is left out entirely."""
    src, dst = split_lines(base), split_lines(head)
    out: list[bytes] = []
    pos = 0
    for h in sorted(hunks, key=lambda x: x.index):
        chosen = set(selection.get(h.index, ()))
        if not chosen:
            continue
        s = h.source_start - 1 if h.source_length else h.source_start
        t = h.target_start - 1 if h.target_length else h.target_start
        out.extend(src[pos:s])
        number = 0
        for line in h.lines:
            kind = line[:1]
            if kind == " ":
                out.append(src[s])
                s, t = s + 1, t + 1
            elif kind == "-":
                number += 1
                if number not in chosen:
                    out.append(src[s])
                s += 1
            elif kind == "+":
                number += 1
                if number in chosen:
                    out.append(dst[t])
                t += 1
        pos = s
    out.extend(src[pos:])
    return _join(out, _file_ending(src, dst))


def check_selection(hunks: list[Hunk], selection: Mapping[int, Collection[int]], branch: str):
    """Refuses (one line, saying what exists) a hunk or a line number the diff lacks."""
    by_index = {h.index: h for h in hunks}
    for index, numbers in selection.items():
        hunk = by_index.get(index)
        if hunk is None:
            raise SkillsRepoError(f"no hunk {index} in {branch}; it has hunks 1-{len(hunks)}")
        count = change_count(hunk)
        bad = sorted(n for n in numbers if not 1 <= n <= count)
        if bad or not numbers:
            what = ", ".join(map(str, bad)) or "(none chosen)"
            raise SkillsRepoError(
                f"no changed line {what} in hunk {index} of {branch}; it has changed lines "
                f"1-{count} (see `skillopt skills diff {branch} --numbers`)"
            )


def whole_and_partial(
    hunks: list[Hunk], selection: Mapping[int, Collection[int]]
) -> tuple[list[int], Selection]:
    """Splits a selection into the hunks chosen whole and those chosen in part, so choosing
    every line of a hunk is recorded the same way as choosing the hunk."""
    by_index = {h.index: h for h in hunks}
    whole, partial = [], {}
    for index in sorted(selection):
        numbers = frozenset(selection[index])
        if not numbers:
            continue
        if len(numbers) == change_count(by_index[index]):
            whole.append(index)
        else:
            partial[index] = numbers
    return whole, partial


def _ranges(numbers: Collection[int]) -> str:
    ordered = sorted(numbers)
    parts, start = [], None
    for i, n in enumerate(ordered):
        if start is None:
            start = n
        if i + 1 == len(ordered) or ordered[i + 1] != n + 1:
            parts.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ",".join(parts)


def format_lines(partial: Mapping[int, Collection[int]]) -> str:
    """{2: {3, 4, 5, 7}} → '2:3-5,7' (groups joined by spaces)."""
    return " ".join(f"{index}:{_ranges(partial[index])}" for index in sorted(partial))


def format_hunks(whole: Collection[int]) -> str:
    return _ranges(whole)


def parse_lines(spec: str) -> Selection:
    """'2:3-5,7 4:1' → {2: {3, 4, 5, 7}, 4: {1}}. Raises ValueError naming the bad part."""
    selection: dict[int, set[int]] = {}
    groups = spec.replace(";", " ").split()
    if not groups:
        raise ValueError("no HUNK:LINES group")
    for group in groups:
        hunk_part, sep, lines_part = group.partition(":")
        if not sep or not hunk_part.strip().isdigit():
            raise ValueError(group)
        numbers = selection.setdefault(int(hunk_part), set())
        for part in lines_part.split(","):
            lo, dash, hi = part.partition("-")
            if not lo.isdigit() or (dash and not hi.isdigit()):
                raise ValueError(group)
            first, last = int(lo), int(hi) if dash else int(lo)
            if first > last or first < 1:
                raise ValueError(group)
            numbers.update(range(first, last + 1))
    return {index: frozenset(numbers) for index, numbers in selection.items()}


def selected_text(
    git: GitRunner,
    base: bytes,
    head: bytes,
    main: bytes,
    hunks: list[Hunk],
    selection: Mapping[int, Collection[int]],
) -> bytes:
    """Like `hunks.adopted_text`, for a line selection: the chosen lines applied, merged
    with main's own changes since staging; refuses naming the hunks that do not merge."""
    theirs = apply_selection(base, head, hunks, selection)
    merged, conflicts = merge3(git, main, base, theirs)
    if not conflicts:
        return merged
    bad = [
        i
        for i in sorted(selection)
        if merge3(git, main, base, apply_selection(base, head, hunks, {i: selection[i]}))[1]
    ] or sorted(selection)
    names = ", ".join(str(i) for i in bad)
    raise AdoptConflict(
        f"hunk {names} conflicts with changes made on main since the branch was staged; "
        "leave it out, or re-stage from the current main",
        bad,
    )


PartRow = tuple[int, str]  # (index into hunk.lines, the row's kind in the part: " ", "-", "+")


def part_rows(hunk: Hunk, lines: Collection[int], context: int = 3) -> list[PartRow]:
    """The rows of the hunk a part (some of its changed lines) would have as a hunk of its
    own: its chosen changes, an unchosen `-` line as context (it stays in the file), an
    unchosen `+` line left out (it never reaches the file), and up to `context` context
    rows either side. Every changed line chosen: the hunk's own rows."""
    chosen = set(lines)
    rows: list[PartRow] = []
    number = 0
    for i, line in enumerate(hunk.lines):
        kind = line[:1]
        if kind in ("+", "-"):
            number += 1
            if number in chosen:
                rows.append((i, kind))
            elif kind == "-":
                rows.append((i, " "))
        elif kind == " ":
            rows.append((i, " "))
        elif rows and rows[-1][0] == i - 1:  # "\ No newline…" follows its own row
            rows.append((i, "\\"))
    changed = [n for n, (_, kind) in enumerate(rows) if kind in ("+", "-")]
    if not changed:
        return []
    first = max(0, changed[0] - context)
    last = min(len(rows) - 1, changed[-1] + context)
    return rows[first : last + 1]


def part_header(hunk: Hunk, lines: Collection[int]) -> str:
    """The `@@ -a,b +c,d @@` a part would carry as a hunk of its own (applied alone to the
    base, so its new-side numbers start where its old-side ones do)."""
    rows = part_rows(hunk, lines)
    if not rows:
        return hunk.header
    base_line = {}  # index into hunk.lines → the base line number it sits at
    at = hunk.source_start if hunk.source_length else hunk.source_start + 1
    for i, line in enumerate(hunk.lines):
        base_line[i] = at
        if line[:1] in (" ", "-"):
            at += 1
    start = base_line[rows[0][0]]
    old = sum(1 for _, kind in rows if kind in (" ", "-"))
    new = sum(1 for _, kind in rows if kind in (" ", "+"))
    old_start = start if old else start - 1
    new_start = start if new else start - 1
    return f"@@ -{old_start},{old} +{new_start},{new} @@"
