"""What kind of task a prompt is, without a model: it decides how a night replays it.

- `external`: it acts outside the project (posts, sends, deploys, pushes, publishes a
  release): a replay would do it again for real, so it is never replayed;
- `redacted`: the secret the harvest replaced is what the request is about ("decode this
  token"): with the secret gone it cannot be answered, so it is dropped;
- `agentic`: it reads or changes the project or runs commands; the session's own evidence
  (the assistant called file or shell tools answering it, or handed it to a sub-agent)
  decides first;
- `advice`: answerable from its text and its context. A question that asks for no change
  stays advice where the session only read to answer it (a yes/no question about the
  code), or where it is about another machine ("staging can't reach the db … why does
  the connection time out?": the project's copy cannot show it); a question is never
  `external` (asking which credential to use acts on nothing).
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
    r"|\bdeploy\w*\b(?!\s+(?:keys?|tokens?|credentials?)\b)|\bship it\b|\broll (?:it )?out\b"
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


# Handing the work to a sub-agent (Claude Code's Agent/Task tool, Codex's spawn_agent).
_DELEGATION_TOOLS = re.compile(r"^(?:agent|task|dispatch_agent|spawn_agent|subagent)$", re.I)
_DELEGATES = re.compile(
    r"\b(?:delegate|hand (?:it|this) off|spawn|use|ask|with|via)\b[^.?!\n]*\bsub-?agents?\b", re.I
)
# Tools that only read: a question answered with them asked for no change.
_READ_TOOLS = re.compile(
    r"^(?:read|grep|glob|ls|view|read_file|list_dir\w*|webfetch|websearch|todowrite)$", re.I
)
_YES_NO = re.compile(
    r"^\s*(?:is|are|does|do|did|can|could|will|would|should|has|have|was|were)\s+"
    r"(?!you\b|u\b)",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"\b(?:add|fix|implement|refactor|rename|remove|delete|create|write|update|edit|change|"
    r"move|replace|migrate|bump|upgrade|convert|rewrite|extract|make it|set up)\b",
    re.IGNORECASE,
)
_ELSEWHERE = re.compile(
    r"\b(?:staging|production|prod|the server|remote|the cluster|the vm|ci runner)\b", re.I
)
# A question that weighs a choice ("should I use a deploy key?", "which token …?"):
# never external, whatever it names. "can we push it?" is not one: it may mean "do it".
_ASKS_WHICH = re.compile(
    r"^\s*(?:which|what|why|how|should (?:i|we)|is (?:it|a|an|the)|are|does|do (?:i|we))\b",
    re.IGNORECASE,
)
# A question that asks the agent to act ("can you deploy it?") is a request.
_POLITE_REQUEST = re.compile(r"^\s*(?:can|could|would|will)\s+(?:you|u)\b|^\s*please\b", re.I)


def used_project_tools(tools: list[str]) -> bool:
    return any(_PROJECT_TOOLS.match(t) or _DELEGATION_TOOLS.match(t) for t in tools)


def is_question(text: str) -> bool:
    """A question for an answer, not a request to act ("can you …?" is a request)."""
    if _POLITE_REQUEST.match(text):
        return False
    last = text.strip().rsplit("\n", 1)[-1]
    return last.rstrip().endswith("?") or bool(_QUESTION.match(text) or _YES_NO.match(text))


# A shell command that only reads (Codex reads files with `sed -n`, `rg`, `cat`).
_READ_COMMAND = re.compile(
    r"^(?:cat|sed\s+-n|rg|grep|ls|head|tail|nl|wc|find|tree|pwd|echo|file|stat|"
    r"git\s+(?:log|show|diff|status|grep|blame|ls-files))\b"
)
# Asking how the code behaves: "walk me through how X handles Y", "how does X treat Y?",
# "explain how a photo ends up in a folder"
_BEHAVIOUR = re.compile(
    r"^\s*(?:walk me through|talk me through|explain(?: to me)? (?:how|why))\b|"
    r"^\s*how (?:does|do|is|are)\b[^?\n]*"
    r"\b(?:handle|handled|treat|treated|work|behave|deal)",
    re.IGNORECASE,
)


# A question after what the code does: "how many readings does bench-2 log per hour?",
# "what does caption() return for …?", "what happens when …?" (not "what is in here?",
# which asks for the workspace itself).
_HOW_IT_BEHAVES = re.compile(
    r"^\s*(?:how (?:many|much|often|long)|what (?:does|do|happens|would|will))\b",
    re.IGNORECASE,
)


_SHELL_TOOLS = re.compile(r"^(?:bash|shell|exec_command|local_shell|shell_command)$", re.I)


def _only_reads(tools: list[str], commands: list[str]) -> bool:
    """The session only read answering it: read tools, and shell commands that read."""
    shell = False
    for tool in tools:
        if _SHELL_TOOLS.match(tool):
            shell = True
        elif not _READ_TOOLS.match(tool) and (
            _PROJECT_TOOLS.match(tool) or _DELEGATION_TOOLS.match(tool)
        ):
            return False  # it wrote, edited or handed the work on
    steps = [s for c in commands for s in re.split(r"\s*(?:&&|;|\|\|?)\s*", c.strip()) if s]
    if shell and not steps:
        return False  # a shell call whose command was not recorded
    return all(_READ_COMMAND.match(s) or s.startswith("cd ") for s in steps)


def _question_for_advice(text: str, tools: list[str], commands: list[str]) -> bool:
    """A question that asks for no change and that the project's copy does not answer
    better than its text: a yes/no or behaviour question the session only read files
    for, or one about another machine."""
    if _CHANGE.search(text) or _delegates(text, tools):
        return False
    # "how many … per hour?" once the session read the code to answer it: the chat replay is
    # given what it read (with nothing read, the workspace is what answers it)
    read_to_answer = bool(tools) and bool(_HOW_IT_BEHAVES.match(text))
    behaviour = bool(_BEHAVIOUR.match(text)) or read_to_answer
    if not (is_question(text) or behaviour):
        return False
    if _ELSEWHERE.search(text):
        return not any(_writes(t) for t in tools)
    return (bool(_YES_NO.match(text)) or behaviour) and _only_reads(tools, commands)


def _writes(tool: str) -> bool:
    return bool(re.match(r"^(?:write|edit|multiedit|notebookedit|apply_patch|write_file|"
                         r"edit_file|str_replace\w*|create_file)$", tool, re.I))  # fmt: skip


def _delegates(text: str, tools: list[str]) -> bool:
    return any(_DELEGATION_TOOLS.match(t) for t in tools) or bool(_DELEGATES.search(text))


# Asking which kind of credential to use needs no particular secret ("which kind of token
# should CI use?", "a fine-grained token or a deploy key?").
_WHICH_KIND = re.compile(
    r"\b(?:which|what)\s+(?:kind|type|sort)s?\s+of\b|\bshould\s+(?:i|we|ci|it|the \w+)\s+use\b"
    r"|\b(?:token|key)\s+or\s+(?:an?\s+)?[\w-]+\s+(?:token|key)\b",
    re.IGNORECASE,
)


# An error a service answered with ("the uploader says 401 with token … - is it expired
# or missing a scope?"): what the question is about, the token beside it; unless the
# request works on the value itself (decode it, parse it, whose is it).
_ERROR_CITED = re.compile(
    r"\b(?:40[13]|unauthori[sz]ed|forbidden|denied|refused|rejected|failed|fails)\b", re.I
)
_OPERATES_ON_IT = re.compile(
    r"\b(?:decode|decrypt|parse|inspect|whose|what(?:'s| is) in|which (?:account|user))\b", re.I
)


# A secret inside a URL's credentials (`https://dev:[REDACTED:github_token]@github.com/…`,
# pasted from an error): part of the address the output names, never what is asked about.
_IN_URL = re.compile(r"://[^\s/@]*\[REDACTED:[\w.-]*\][^\s/@]*@")


# A question after a cause or a choice ("is the token expired or …?", "has it moved?"); not
# "can we …?" or "should we …?", which may mean "do it".
_ASKS_CAUSE = re.compile(
    r"^\s*(?:is|are|was|were|has|have|had|does|did|which|what|why|how)\b", re.I
)
# The clause a prompt ends on: after its last sentence end, colon or dash.
_LAST_CLAUSE = re.compile(r"(?:^|[.!?:]\s+|\s[-—–]\s+)(?P<clause>[^.!?:—–]*\?)\s*$")


def _ends_asking(text: str) -> bool:
    """It ends on a question that weighs a cause or a choice ("the deploy job fails with:
    … - is the token expired or is the url wrong?"): what it names before is the output
    being asked about, not something to do."""
    last = _LAST_CLAUSE.search(text)
    return last is not None and bool(_ASKS_CAUSE.match(last.group("clause")))


def is_about_a_secret(text: str) -> bool:
    """The redacted secret is what the request is about, not a detail beside it: a
    question of which kind of credential to use is answerable without it, and so is one
    about an error whose pasted URL carried it."""
    text = _IN_URL.sub("://@", text)
    if REDACTION_MARK not in text or _WHICH_KIND.search(text):
        return False
    if _ERROR_CITED.search(text) and not _OPERATES_ON_IT.search(text):
        return False  # a question about an error the service gave, not about the value
    return bool(_ABOUT_SECRET.search(text)) and (bool(_SECRET_WORD.search(text)) or len(text) < 200)


def kind_of(
    text: str,
    *,
    tools: list[str] = (),
    context_agentic: bool = False,
    commands: list[str] = (),
) -> TaskKind:
    """The task's kind from its (redacted) text, the tools the session used answering it
    and the shell commands it ran, and whether the turns it follows up on were agentic."""
    if is_about_a_secret(text):
        return "redacted"
    # A redaction's mark names its kind (`[REDACTED:aws_access_key_id]`), which reads like
    # an identifier of the project: the words of the request decide, not the mark.
    text = _MARK.sub(" ", text)
    tools = list(tools)
    if _EXTERNAL.search(text) and not (_ASKS_WHICH.match(text) or _ends_asking(text)):
        return "external"
    if _delegates(text, tools):
        return "agentic"
    if _question_for_advice(text, tools, list(commands)):
        return "advice"
    if used_project_tools(tools) or context_agentic or _agentic_text(text):
        return "agentic"
    return "advice"


def normalise_kind(kind: object) -> TaskKind:
    """A kind read from an old archive or a model: `coding` (before kinds) is `agentic`."""
    if kind == "coding":
        return "agentic"
    return kind if kind in KINDS else "advice"  # type: ignore[return-value]
