"""The file edits in the tool calls of pi, OpenCode, Copilot CLI, VS Code Copilot Chat and
Cursor, as the prior-edit model's FileEdits (sleep/harvest/file_edits.py; Claude Code's and
Codex's are there).

Each agent names its tools and their arguments its own way; what each function reads is
where it was found:
- pi 0.73.1 (dist/core/tools/edit.js, write.js): `edit {path, edits: [{oldText, newText}]}`
  (older `{path, oldText, newText}`; some models send `edits` as JSON text), `write {path,
  content}`; a leading `@` on the path is dropped, as pi does;
- OpenCode 1.18.33 (its binary's bundled tools): `edit {filePath, oldString, newString,
  replaceAll?}` (an empty oldString makes a new file), `write {filePath, content}`,
  `apply_patch {patchText}` (Codex's patch format);
- Copilot CLI 1.0.102 (cli-main.js): `edit {path, old_str, new_str?}`, `create {path,
  file_text}`, `str_replace_editor {command: create | str_replace, …}` (its `insert` is by
  line number: left out), `apply_patch` (Codex's patch text, or `{input}` / `{patch}`);
- VS Code Copilot Chat (no editor here): a tool call's input is its part's
  `toolSpecificData.rawInput`; `replace_string_in_file {filePath, oldString, newString}`,
  `multi_replace_string_in_file {replacements: [...]}`, `create_file {filePath, content}`,
  `apply_patch {input}`, or their `copilot_*` ids. Its `textEditGroup` parts hold edits by
  line and column with no old text to check them against: left out;
- Cursor (no binary here; the shape other readers of its transcripts document):
  `StrReplace {path | file_path, old_string, new_string, replace_all?}`, `Write {path |
  file_path, contents | content}`, `ApplyPatch` (Codex's patch text).
pi's and OpenCode's edit tools also match loosely (trailing spaces, indentation); ours is
exact, so such an edit is skipped, noted, when replayed.
"""

from __future__ import annotations

import json
from typing import Any

from sleep.harvest.file_edits import FileEdit, codex_patch_edits


def no_edits(name: str, arguments: Any) -> list[FileEdit]:
    """For a call whose edits are not to be kept (it failed, or its outcome is unknown)."""
    return []


def _str(args: dict, *keys: str) -> str | None:
    for key in keys:
        if isinstance(args.get(key), str):
            return args[key]
    return None


def _replace(path: Any, old: Any, new: Any, replace_all: Any = False) -> list[FileEdit]:
    if not (isinstance(path, str) and path and isinstance(old, str) and isinstance(new, str)):
        return []
    return [FileEdit(path, new, old, replace_all=replace_all is True)]


def _write(path: Any, content: Any) -> list[FileEdit]:
    if not (isinstance(path, str) and path and isinstance(content, str)):
        return []
    return [FileEdit(path, content, write=True)]


def _patch(arguments: Any, *keys: str) -> list[FileEdit]:
    """A Codex-format patch: the text itself, or one of `keys` of a dict."""
    if isinstance(arguments, dict):
        arguments = _str(arguments, *keys)
    return codex_patch_edits(arguments)


def pi_edits(name: str, arguments: Any) -> list[FileEdit]:
    if not isinstance(arguments, dict):
        return []
    path = arguments.get("path")
    path = path[1:] if isinstance(path, str) and path.startswith("@") else path
    if name == "write":
        return _write(path, arguments.get("content"))
    if name != "edit":
        return []
    steps = arguments.get("edits")
    if isinstance(steps, str):
        try:
            steps = json.loads(steps)
        except ValueError:
            steps = None
    steps = list(steps) if isinstance(steps, list) else []
    if "oldText" in arguments:
        steps.append({"oldText": arguments.get("oldText"), "newText": arguments.get("newText")})
    return [
        e
        for step in steps
        if isinstance(step, dict)
        for e in _replace(path, step.get("oldText"), step.get("newText"))
    ]


def opencode_edits(name: str, arguments: Any) -> list[FileEdit]:
    if not isinstance(arguments, dict):
        return []
    path = arguments.get("filePath")
    if name == "edit":
        old, new = arguments.get("oldString"), arguments.get("newString")
        if old == "":  # a new file (OpenCode refuses it when the file is there)
            return [FileEdit(path, new)] if isinstance(path, str) and isinstance(new, str) else []
        return _replace(path, old, new, arguments.get("replaceAll"))
    if name == "write":
        return _write(path, arguments.get("content"))
    if name == "apply_patch":
        return _patch(arguments, "patchText")
    return []


def copilot_edits(name: str, arguments: Any) -> list[FileEdit]:
    if name == "apply_patch":
        return _patch(arguments, "input", "patch")
    if not isinstance(arguments, dict):
        return []
    path = arguments.get("path")
    command = arguments.get("command") if name == "str_replace_editor" else name
    if command in ("edit", "str_replace"):
        new = arguments.get("new_str")
        return _replace(path, arguments.get("old_str"), "" if new is None else new)
    if command == "create":
        return _write(path, arguments.get("file_text"))
    return []


_VSCODE = {
    "copilot_replaceString": "replace_string_in_file",
    "copilot_multiReplaceString": "multi_replace_string_in_file",
    "copilot_createFile": "create_file",
    "copilot_applyPatch": "apply_patch",
}


def vscode_edits(tool_id: str, arguments: Any) -> list[FileEdit]:
    name = _VSCODE.get(tool_id, tool_id)
    if name == "apply_patch":
        return _patch(arguments, "input")
    if not isinstance(arguments, dict):
        return []
    if name == "create_file":
        return _write(arguments.get("filePath"), arguments.get("content"))
    steps = arguments.get("replacements") if name == "multi_replace_string_in_file" else None
    if name == "replace_string_in_file":
        steps = [arguments]
    return [
        e
        for s in (steps if isinstance(steps, list) else [])
        if isinstance(s, dict)
        for e in _replace(s.get("filePath"), s.get("oldString"), s.get("newString"))
    ]


def cursor_edits(name: str, arguments: Any) -> list[FileEdit]:
    if name == "ApplyPatch":
        return _patch(arguments, "patch", "input")
    if not isinstance(arguments, dict):
        return []
    path = _str(arguments, "path", "file_path")
    if name == "StrReplace":
        old, new = arguments.get("old_string"), arguments.get("new_string")
        return _replace(path, old, new, arguments.get("replace_all"))
    if name == "Write":
        return _write(path, _str(arguments, "contents", "content"))
    return []
