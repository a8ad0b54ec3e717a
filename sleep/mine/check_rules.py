"""How each kind of mined check reads a replay's evidence (sleep/mine/tasks.py `Check`).

Why apart from the dataclass: these are the rules a correction becomes without a judge
("use logging, not print" → the diff adds no `print(`; "did you run the tests?" → the
agent ran `make test`; "just yes or no" → the reply opens with yes or no), and each must
be fair to a correct reply: a literal ending in punctuation (`print(`) matches
`print(f"…")`; a diff check reads only the lines the replay added; an import of the
standard library or of the project's own modules is no new dependency.
"""

from __future__ import annotations

import re
import sys
from typing import Any

# Characters that may open a reply before its first word ("**Yes.**", "> No —").
_LEADING_MARKS = " \t*_#>`\"'-•"
SIZE = re.compile(r"^\s*(\d+)\s*(chars?|characters?|words?)\s*$", re.IGNORECASE)
_PY_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w., ]+))")
_JS_IMPORT = re.compile(r"""(?:\bfrom\s+|\brequire\(\s*|^\s*import\s+)['"]([^'"]+)['"]""")
_FILE_HEADER = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_EITHER_HEADER = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)")
# A commit among the commands an agent ran: `git commit …`, `git -C dir commit`, and
# `git commit` inside a chain (`git add -A && git commit -m …`).
_GIT_COMMIT = re.compile(r"\bgit\s+(?:-{1,2}[\w-]+(?:[= ]\S+)?\s+)*commit\b")
# A dependency line added to a manifest: `requests>=2` (requirements), `"httpx>=0.27",`
# (pyproject), `"left-pad": "^1.3.0"` (package.json), `serde = "1"` (Cargo.toml).
_MANIFEST_LINE = {
    "requirements": re.compile(r"^\s*[A-Za-z0-9][\w.\[\],-]*\s*(?:[<>=~!]=?|$)"),
    "pyproject.toml": re.compile(r"^\s*\"[A-Za-z0-9][\w.\[\],-]*\s*(?:[<>=~!;]|\")"),
    "package.json": re.compile(r"^\s*\"[@\w./-]+\"\s*:\s*\"[\^~]?\d"),
    "Cargo.toml": re.compile(r"^\s*[\w-]+\s*=\s*(?:\"|\{)"),
}
_NODE_BUILTINS = frozenset(
    [
        "assert", "buffer", "child_process", "crypto", "events", "fs", "http", "https", "net",
        "os", "path", "process", "querystring", "readline", "stream", "string_decoder", "timers",
        "tls", "url", "util", "worker_threads", "zlib",
    ]
)  # fmt: skip
# "add type hints" as a diff check (sleep/mine/correction_checks.py): an annotation added.
TYPE_HINTS = r"\)\s*->|:\s*\w+(?:\[[^\]]*\])?\s*[=,)]"
# "add docstrings": a docstring or doc comment opened (Python's triple quotes, JSDoc's /**).
DOCSTRING = '"""' + "|'''|" + r"/\*\*"
_DEFINES = re.compile(
    r"^\s*(?:(?:async\s+)?def\s+\w+\s*\(|class\s+\w+|(?:export\s+)?(?:async\s+)?function\b)"
)
# Checks about how new code of some sort is written, each with what marks that code and
# what a diff without it is: a correct change that adds no function has no type hints
# to add, and failing it says a correct reply broke the person's rule (issue 37).
_ABOUT_NEW_CODE = {
    TYPE_HINTS: (re.compile(r"^\s*(?:async\s+)?def\s+\w+\s*\("), "its changes add no function"),
    DOCSTRING: (_DEFINES, "its changes add no function or class"),
}


def not_applicable(kind: str, value: str, evidence: Any) -> str:
    """Why a check about how new code is written says nothing of this replay: the diff
    adds no such code ('' when it applies, or its evidence cannot tell)."""
    about = _ABOUT_NEW_CODE.get(value) if kind == "diff_adds" else None
    if about is None or evidence.diff is None:
        return ""
    marks, why = about
    return "" if any(marks.search(line) for line in added_lines(evidence.diff)) else why


def evaluate_check(kind: str, value: str, evidence: Any) -> bool | None:
    """Whether `evidence` (sleep.mine.tasks.ReplayEvidence) passes the check; None: it cannot tell."""
    reply: str = evidence.reply
    if kind in ("contains", "not_contains"):
        # what the replay says or writes: its reply and the lines its diff adds
        written = "\n".join([reply, *added_lines(evidence.diff or "")])
        found = literal_in(value, written)
        return found if kind == "contains" else not found
    if kind == "answer_starts_with":
        return starts_with(reply, value)
    if kind == "answer_first_line_max":
        return first_line_within(reply, value)
    if kind in ("ran", "no_commit"):
        if evidence.commands is None:
            return None
        if kind == "no_commit":
            return not any(_GIT_COMMIT.search(c) for c in evidence.commands)
        return any(_search(value, c) for c in evidence.commands)
    if evidence.diff is None or kind == "command":
        return None
    if kind in ("diff_adds", "diff_not_adds"):
        found = any(_search(value, line) for line in added_lines(evidence.diff))
        return found if kind == "diff_adds" else not found
    if kind == "no_new_import":
        return not new_dependencies(evidence.diff, evidence.local_modules)
    if kind == "diff_leaves":
        return not any(_search(value, path) for path in changed_paths(evidence.diff))
    return None


def describe_check(kind: str, value: str) -> str:
    return {
        "contains": f"mentions {value!r}",
        "not_contains": f"avoids {value!r}",
        "command": f"runs {value!r} successfully",
        "diff_adds": f"its changes add /{value}/",
        "diff_not_adds": f"its changes add no /{value}/",
        "no_new_import": "its changes add no third-party import or dependency",
        "ran": f"the agent ran /{value}/",
        "answer_first_line_max": f"the reply's first line is at most {value}",
        "answer_starts_with": f"the reply starts with {' or '.join(value.split('|'))}",
        "no_commit": "the agent made no commit",
        "diff_leaves": f"its changes leave files matching /{value}/ untouched",
    }.get(kind, f"{kind} {value!r}")


def literal_in(value: str, text: str) -> bool:
    """A whole-word match where the literal starts or ends with a word character ("avoid
    npm" must not fail on "pnpm"); an end that is punctuation (`print(`) needs no
    boundary, so `print(` is found in `print(f"…")`."""
    head = r"(?<![\w-])" if value[:1].isalnum() or value[:1] == "_" else ""
    tail = r"(?![\w-])" if value[-1:].isalnum() or value[-1:] == "_" else ""
    return re.search(head + re.escape(value) + tail, text, re.IGNORECASE) is not None


def _search(pattern: str, text: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error:  # a model's check that is no regular expression: a literal
        return pattern in text


def starts_with(reply: str, value: str) -> bool:
    words = [w.strip() for w in value.split("|") if w.strip()]
    opening = reply.lstrip(_LEADING_MARKS).lower()
    return any(re.match(re.escape(w.lower()) + r"\b", opening) for w in words)


# A code fence's opening line ("```", "```bash", "~~~"): markup, not what the reply says.
_FENCE = re.compile(r"^(?:`{3,}|~{3,})[\w+.-]*$")


def first_line_within(reply: str, value: str) -> bool | None:
    """Whether the reply's first line of content is within `value`. Why a leading fence
    and blank lines are skipped: "just the command" is best answered as a code block, whose
    first line is "```bash" (2 words), so counting it passed an essay that opens with a
    block and measured nothing of a command that does (issue 37, ledger round 6)."""
    size = SIZE.match(value)
    if not size:
        return None
    line = next((s for ln in reply.splitlines() if (s := ln.strip()) and not _FENCE.match(s)), "")
    limit, unit = int(size.group(1)), size.group(2).lower()
    return len(line.split() if unit.startswith("word") else line) <= limit


def added_lines(diff: str) -> list[str]:
    return [ln[1:] for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]


def changed_paths(diff: str) -> list[str]:
    """Every file a diff touches: added, changed or deleted (both header lines)."""
    found = (m.group(1) for m in map(_EITHER_HEADER.match, diff.splitlines()) if m)
    return list(dict.fromkeys(p for p in found if p != "/dev/null"))


def _removed_lines(diff: str) -> list[str]:
    return [ln[1:] for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]


def _imports(lines: list[str]) -> set[str]:
    found = set()
    for line in lines:
        py = _PY_IMPORT.match(line)
        if py and py.group(1):
            found.add(py.group(1).split(".")[0])
        elif py:
            found |= {
                n.strip().split()[0].split(".")[0] for n in py.group(2).split(",") if n.strip()
            }
        js = _JS_IMPORT.search(line)
        if js and not js.group(1).startswith((".", "/")):
            name = js.group(1).removeprefix("node:")
            found.add("/".join(name.split("/")[:2]) if name.startswith("@") else name.split("/")[0])
    return {n for n in found if n and not n.startswith(".")}


def _diff_files(diff: str) -> dict[str, list[str]]:
    """Each file's added lines."""
    files: dict[str, list[str]] = {}
    current = ""
    for line in diff.splitlines():
        header = _FILE_HEADER.match(line)
        if header:
            current = header.group(1)
            files.setdefault(current, [])
        elif line.startswith("+") and not line.startswith("+++") and current:
            files[current].append(line[1:])
    return files


def _manifest_rule(path: str) -> re.Pattern[str] | None:
    name = path.rsplit("/", 1)[-1]
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return _MANIFEST_LINE["requirements"]
    return _MANIFEST_LINE.get(name)


def new_dependencies(diff: str, local_modules: frozenset[str] = frozenset()) -> list[str]:
    """The third-party imports and dependency lines a diff adds (none: it passes)."""
    files = _diff_files(diff)
    own = (
        set(local_modules)
        | {p.split("/")[0].removesuffix(".py") for p in files}
        | {p.rsplit("/", 1)[-1].removesuffix(".py") for p in files}
    )
    known = set(sys.stdlib_module_names) | _NODE_BUILTINS | own | {"__future__"}
    imported = _imports(added_lines(diff)) - _imports(_removed_lines(diff))
    out = sorted(n for n in imported if n not in known)
    for path, lines in files.items():
        rule = _manifest_rule(path)
        out += [f"{path}: {ln.strip()}" for ln in lines if rule and ln.strip() and rule.match(ln)]
    return out
