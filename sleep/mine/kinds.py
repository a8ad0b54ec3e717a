"""What kind of task a prompt is, without a model: it decides how a night replays it.

- `external`: it acts outside the project (posts, sends, deploys, pushes, publishes a
  release): a replay would do it again for real, so it is never replayed;
- `redacted`: the secret the harvest replaced is what the request is about ("decode this
  token"): with the secret gone it cannot be answered, so it is dropped;
- `agentic`: it reads or changes the project or runs commands; the session's own evidence
  (the assistant called file or shell tools answering it) decides first;
- `advice`: answerable from its text and its context.
The miner model may refine a kind (sleep/mine/with_model.py); these rules are the fallback.
"""

from __future__ import annotations

import re
from typing import Literal

TaskKind = Literal["agentic", "advice", "external", "redacted"]
KINDS: tuple[str, ...] = ("agentic", "advice", "external", "redacted")
REDACTION_MARK = "[REDACTED:"

_EXTERNAL = re.compile(
    r"\b(?:post|send|message|notify|ping|announce|tweet|email|e-mail|mail|dm)\b[^.?!\n]*?"
    r"(?:#[a-z0-9][\w-]*|@\w+|\bslack\b|\bchannel\b|\bteams?\b|\bemail\b|\bdiscord\b|"
    r"\bmailing list\b|\bon-call\b|\bstakeholders\b|\bcustomers?\b)"
    r"|\bdeploy\w*\b|\bship it\b|\broll (?:it )?out\b"
    r"|\bgit push\b|\bpush (?:it|this|that|them|the \w+|my \w+)?\s*(?:to|up)\b|\bforce[- ]push\b"
    r"|\b(?:open|create|file|submit|raise)\s+(?:a |an |the )?(?:pr|pull request|merge request|"
    r"github issue|jira ticket|ticket)\b"
    r"|\bmerge (?:it|this|the pr|the branch) (?:into|to)\b"
    r"|\bpublish\w*\b[^.?!\n]*\b(?:pypi|npm|crates\.io|registry|release)\b"
    r"|\b(?:tag and )?release (?:it|v?\d)"
    r"|\b(?:upload|sync)\b[^.?!\n]*\b(?:s3|bucket|server|prod\w*)\b",
    re.IGNORECASE,
)
# What a request about a secret asks of it.
_ABOUT_SECRET = re.compile(
    r"\b(?:decode|decrypt|parse|inspect|verify|validate|check|expire\w*|expir\w+|valid|"
    r"what (?:is|does)|whose|which (?:account|user|scope)|rotate|revoke|is (?:this|it) (?:a |the )?"
    r"(?:real|live|leaked))\b",
    re.IGNORECASE,
)
_MARK = re.compile(r"\[REDACTED:[\w.-]*\]")
_SECRET_WORD = re.compile(
    r"\b(?:this|the|my|that|our)\s+(?:\w+\s+)?(?:token|key|secret|password|jwt|credential\w*|"
    r"cert\w*|cookie)\b",
    re.IGNORECASE,
)
# Asking the agent to do something to the project: a verb of work on a thing of it.
_ACTION = re.compile(
    r"\b(?:add|fix|implement|refactor|rename|remove|delete|create|write|update|edit|change|"
    r"move|replace|migrate|bump|upgrade|convert|rewrite|extract|split|merge|format|lint|"
    r"run|execute|build|compile|install|test|debug|profile|list|find|grep|search|count|"
    r"show me|open|read|look at|check|review|scan|summari[sz]e|document|commit|revert)\b"
    r"[^?\n]*?\b(?:file|files|function|method|class|module|package|stage|stages|test|tests|"
    r"suite|repo|repository|project|codebase|code|readme|changelog|docs?|config|script|"
    r"directory|folder|dependency|dependencies|branch|commit|build|docstrings?|comments?|"
    r"validation|type hints|logging|alias|it|them|this|these|those)\b",
    re.IGNORECASE,
)
# Naming something in the project: this repo, a file, a path, a function (and see below).
_PROJECT_REFERENCE = re.compile(
    r"\b(?:this|the|our)\s+(?:project|repo|repository|codebase|code base|working tree|branch)\b"
    r"|\b[\w-]+\.(?:py|js|ts|tsx|jsx|rs|go|rb|java|kt|c|h|cpp|cs|php|sh|md|toml|ya?ml|json|"
    r"ini|cfg|txt|sql|html|css|lock)\b"
    r"|\b\w+\(\)"
    r"|(?:^|\s)(?:\./|src/|tests?/|lib/)\S*",
    re.IGNORECASE,
)
# A question for advice ("how do I install …?") rather than a request to act.
_QUESTION = re.compile(
    r"^\s*(?:how (?:do|can|should|would) (?:i|we|you|one)|how to|what(?:'s| is| are| does)?|why|"
    r"which|when|should (?:i|we)|is it|is there|are there|can (?:i|we)|explain|tell me)\b",
    re.IGNORECASE,
)


# A name with an underscore: a function or variable of the project (`add_note`), or, in
# capitals, a named constant, which is as often a library's (`ROUND_HALF_UP` of `decimal`):
# a question about a constant is answerable from its text, a request naming one changes it.
_IDENTIFIER = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b", re.IGNORECASE)


def _names_project_identifier(text: str, question: bool) -> bool:
    return any(not (question and name.isupper()) for name in _IDENTIFIER.findall(text))


def _agentic_text(text: str) -> bool:
    question = bool(_QUESTION.match(text))
    if _PROJECT_REFERENCE.search(text) or _names_project_identifier(text, question):
        return True
    return not question and bool(_ACTION.search(text))


# Tools that read or change the project or run commands (not web search, not todo lists).
_PROJECT_TOOLS = re.compile(
    r"^(?:bash|shell|exec_command|local_shell|shell_command|read|write|edit|multiedit|glob|"
    r"grep|ls|notebookedit|apply_patch|read_file|write_file|edit_file|list_dir\w*|"
    r"view|str_replace\w*|create_file)$",
    re.IGNORECASE,
)


def used_project_tools(tools: list[str]) -> bool:
    return any(_PROJECT_TOOLS.match(t) for t in tools)


def is_about_a_secret(text: str) -> bool:
    """The redacted secret is what the request is about, not a detail beside it."""
    if REDACTION_MARK not in text:
        return False
    return bool(_ABOUT_SECRET.search(text)) and (bool(_SECRET_WORD.search(text)) or len(text) < 200)


def kind_of(text: str, *, tools: list[str] = (), context_agentic: bool = False) -> TaskKind:
    """The task's kind from its (redacted) text, the tools the session used answering it,
    and whether the turns it follows up on were agentic."""
    if is_about_a_secret(text):
        return "redacted"
    # A redaction's mark names its kind (`[REDACTED:aws_access_key_id]`), which reads like
    # an identifier of the project: the words of the request decide, not the mark.
    text = _MARK.sub(" ", text)
    if _EXTERNAL.search(text):
        return "external"
    if used_project_tools(list(tools)) or context_agentic or _agentic_text(text):
        return "agentic"
    return "advice"


def normalise_kind(kind: object) -> TaskKind:
    """A kind read from an old archive or a model: `coding` (before kinds) is `agentic`."""
    if kind == "coding":
        return "agentic"
    return kind if kind in KINDS else "advice"  # type: ignore[return-value]
