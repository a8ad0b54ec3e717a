"""Whether a prompt that follows an answer corrects it, read from how it is built.

Phrase tables (sleep/mine/corrections.py) learn one person's wording and miss the next
person's: four corpora in a row each met mining at 3-4 of 14-19 corrections attached. What
carries from person to person is the structure of a correction:
- it **refers back** to the answer before it: its identifiers and content words are the
  request's, the reply's or its diff's ("returning None on a broken line just hides it"
  after a diff that returns None), or a pronoun stands for the thing made ("a test for
  it"), or it asks after the agent's own act ("you didnt add a test", "did you run …");
- it **pushes back**: a negation, a contrast or a repetition ("no", "not", "instead",
  "again", "still", "too", "why"), or it is a terse fragment or a verbless question
  about the reply ("test?", "tz??", "None for an empty day?");
- it **brings no new object of work**: a new request opens with a verb of work on a
  thing the exchange has not named ("now add heat_stress(reading) to alerts.py"), or is a
  full question about something not in the exchange ("does parse_line take a Z?").
`judge` weighs these into a score (positive: a correction) and says why in one line, so a
person reading `dry-run --json` (and whoever debugs the miner) sees what decided. The old
phrase shapes stay one signal among the others: they are how many corrections are worded,
not what makes one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sleep.mine.correction_checks import practices_named
from sleep.mine.corrections import head_and_next, heads_a_request, is_correction

# Words that carry no object: function words, politeness, fillers and the agent's name
# for itself. What remains of a prompt are its content words.
_STOP = frozenset(
    ["a", "an", "the", "and", "or", "but", "if", "then", "so", "to", "of", "in", "on", "at",
    "by", "for", "with", "from", "into", "onto", "as", "is", "are", "was", "were", "be",
    "been", "being", "am", "do", "does", "did", "done", "doing", "have", "has", "had",
    "having", "can", "could", "will", "would", "should", "shall", "may", "might", "must", "i",
    "me", "my", "we", "our", "us", "you", "your", "yours", "he", "she", "they", "them",
    "their", "it", "its", "this", "that", "these", "those", "there", "here", "what", "which",
    "who", "whom", "whose", "when", "where", "why", "how", "all", "any", "some", "each",
    "every", "both", "either", "neither", "one", "ones", "more", "most", "less", "least",
    "very", "too", "also", "just", "only", "even", "ever", "still", "again", "really", "pls",
    "plz", "please", "thx", "thanks", "thank", "ok", "okay", "yes", "yeah", "yep", "hmm",
    "hm", "oh", "well", "now", "then", "next", "like", "get", "got", "make", "made", "let",
    "lets", "want", "need", "know", "think", "see", "say", "said", "tell", "told", "give",
    "gave", "go", "going", "way", "thing", "things", "stuff", "not", "no", "nope", "never",
    "don", "dont", "didnt", "doesnt", "isnt", "wasnt", "cant", "wont", "shouldnt", "instead",
    "rather", "than", "about", "up", "out", "over", "under", "same", "other", "else", "new",
    "old", "stop", "wrong", "without", "shouldn", "couldn", "wouldn", "isn", "aren", "wasn",
    "weren", "doesn", "didn", "hasn", "haven", "won", "seriously", "huh", "done", "finished",
    "right", "correct", "true", "sure"]
)  # fmt: skip
# Words about the reply's form: a demand made of them asks about the answer, it brings no
# new matter ("too long — answer in one line", "short answer pls, no emoji").
_FORM = re.compile(
    r"\b(?:answers?|lines?|sentences?|words?|short(?:er)?|long(?:er)?|brief|briefly|concise|"
    r"version|summary|gist|essay|details?|verbose|bullets?|emojis?|markdown|plain|text|"
    r"paragraphs?|number|yes|no)\b",
    re.IGNORECASE,
)
# A token that reads as code: backticked, call-like, dotted, snake_case, a flag, a file,
# CamelCase or a CONSTANT.
_IDENTIFIER = re.compile(
    r"`[^`\n]{1,60}`"
    r"|(?<![\w-])--?[a-z][\w-]+"
    r"|\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:\(\))?"
    r"|\b[A-Za-z_]\w*\((?:[^()\n]{0,40})\)"
    r"|\b[a-z]+_[\w]+\b"
    r"|\b[a-z]+[A-Z]\w*\b"
    r"|\b[A-Z][A-Z0-9_]{2,}\b"
    # a keyword argument's name (hours=0) and the literals code writes ([] , None, null)
    r"|\b[a-z_]\w*(?==[^=\s])|\[\]|\{\}|\b(?:None|null|nil|undefined|True|False)\b"
)
_WORD = re.compile(r"[a-z][a-z0-9]+")
# The agent's own act, asked after or reported: "did you run", "you didnt add", "you
# rewrapped", "why'd you"; not "can you add" (a request).
_AGENT_ACT = re.compile(
    r"\b(?:did|didn'?t|didnt|have|haven'?t|havent|why'?d|why did|why have)\s+(?:you|u)\b"
    r"|\b(?:you|u)\s+(?:\w+\s+)?(?:\w+ed|ran|did|didn'?t|didnt|forgot|left|made|put|wrote|"
    r"broke|took|kept|hid|gave|went|still|never|just|again)\b"
    # what the agent keeps doing, refused: "stop printing debug lines"
    r"|\bstop\s+\w+ing\b",
    re.IGNORECASE,
)
# Pushing back on what was done: negation, contrast, repetition, asking why.
PUSHBACK = re.compile(
    r"\b(?:no|not|never|nothing|without|instead|rather|but|again|still|too(?=\s+[a-z])|why|"
    r"stop|back|"
    r"wrong|\w+n't|dont|didnt|doesnt|isnt|wasnt|wont|cant|shouldnt|arent|aint)\b",
    re.IGNORECASE,
)
_REJECTION = re.compile(r"^\s*(?:no|nope|nah|wrong|stop|undo|revert|not (?:that|this|it))\b", re.I)
# Asking for a form of answer is no pushback: the "no" of "yes or no".
_FORM_ASKED = re.compile(r"\byes(?:\s+or\s+|/)no\b|\by/n\b", re.IGNORECASE)
_BACK_PRONOUN = re.compile(
    r"\b(?:it|its|it'?s|that|this|them|those|these)\b"
    r"(?!\s+(?:morning|afternoon|evening|week|weekend|month|year|time|sprint|release)\b)",
    re.IGNORECASE,
)
# A short opening that neither corrects nor asks ("thx.", "hmm", "ok so", "yes ok.").
_OPENING = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|yes|yeah|thx|thanks|ty|cool|great|nice|hmm+|hm|oh|so|and|also|"
    r"well|right|sure|k|wait|erm|um)\b[\s,.!…-]*)+",
    re.IGNORECASE,
)
_POLITE = r"(?:(?:please|pls|plz|can (?:you|u)|could (?:you|u)|would (?:you|u)|will you)\s+)?"
# Opening on a verb of work: the prompt asks for something to be done.
_WORK = re.compile(
    r"^\s*(?:(?:now|next|then)\b[\s,:-]*)?" + _POLITE + r"(?:also\s+)?"
    r"(?:add|make|write|create|give|move|rename|export|implement|delete|remove|refactor|"
    r"build|generate|convert|port|split|extract|update|change|replace|introduce|summari[sz]e|"
    r"explain|list|show|find|walk|document|wire|delegate|survey|bump|upgrade|migrate|drop|fix|support|"
    r"turn|put|plot|draw|compute|set up|hook up|translate|draft|send|post|deploy|open|clean|"
    r"tidy|parse|handle|validate|sort|rewrite|archive)\b",
    re.IGNORECASE,
)
# What says the next piece of work comes: "now add …", "… as well", "another …".
_MOVES_ON = re.compile(
    r"^\s*(?:now|next|then|and now|one more thing|another)\b|\bas well\b|\banother\b|\ba new\b",
    re.I,
)
# A verb of work whose object is the thing made: "make it an lru_cache", "turn that into a
# dataclass" reshape the answer, they ask for nothing new.
_RESHAPES = re.compile(
    r"^\s*" + _POLITE + r"(?:make|turn|change|convert|rewrite|rename|move|put|split|"
    r"refactor)\s+(?:it|that|this|them|those|these)\b",
    re.IGNORECASE,
)
# The work reaches further: "use the same --since for export too", "parse the rates with
# Decimal too, …", "… as well", "also for the csv". A "too" before a word is excess ("too
# long"), which pushes back.
_EXTENDS = re.compile(
    r"\btoo\b(?!\s+[a-z])|\bas well\b|\balso (?:for|in|on|to)\b|\bthe same \w+ (?:for|in|on)\b",
    re.IGNORECASE,
)
# "use …" opens a request only when it reaches further; alone it redirects ("use logging").
_USE = re.compile(r"^\s*" + _POLITE + r"(?:use|apply|reuse|do)\b", re.IGNORECASE)
# What the code would do in a case nobody tried: a new question, not a doubt about the reply
# ("what happens if two runs overlap?", "is fetch_rate going to hang if the api is down?").
_WHAT_IF = re.compile(
    r"\bwhat (?:happens|would happen|will happen|if)\b|\bgoing to\b[^?]{0,60}\b(?:if|when)\b",
    re.IGNORECASE,
)
_SURPRISE = re.compile(r"^\s*(?:wait|hang on|hold on)\b", re.IGNORECASE)
# The person asks how to do something themselves: "how do i run only the ledger tests?"
_HOW_DO_I = re.compile(r"^\s*how (?:do|can|could|would|should) (?:i|we)\b|^\s*how to\b", re.I)
# A prompt's first sentence, when it is a question ("do these hit the real api? …").
_FIRST_QUESTION = re.compile(r"^[^.?!\n]*\?")
# "next: …", "then …": the next thing, whatever follows.
_NEXT_UP = re.compile(r"^\s*(?:now|next|then)\b\s*[:,-]?", re.IGNORECASE)
# A statement whose subject is the thing made: "that dict grows forever", "it still fails",
# "this breaks the build".
_SAID_OF_IT = re.compile(
    r"^\s*(?:that|this|it|these|those)(?:'s|\s+(?:is|are|was|\w+(?:s|ed)|\w+\s+\w+(?:s|ed)))\b",
    re.IGNORECASE,
)
# The state before the answer, named: "keep the old import path working", "as before".
_AS_IT_WAS = re.compile(
    r"\b(?:old|previous|original|before|back|again|still|anymore|any more|earlier|existing|"
    r"used to)\b",
    re.IGNORECASE,
)
# "… can you look?": a request to act, not a question about the reply.
_ASKS_AGENT_TO = re.compile(r"\b(?:can|could|would|will)\s+(?:you|u)\b[^?]*\?\s*$", re.I)
# A requirement said of a thing: "health should also check the db", "remember must default
# to off" (of the thing made when the exchange names it).
_REQUIRED_OF = re.compile(
    r"^\s*(?:the\s+)?(?P<thing>[\w.]+)\s+(?:should|must|needs? to|has to|ought to)\b", re.I
)
# A full question with a finite verb whose subject is not the agent: asks afresh.
_ASKS = re.compile(
    r"^\s*(?:is|are|was|were|does|do|can|could|will|would|should|has|have|how|what|which|"
    r"when|who|whose)\b(?!\s+(?:you|u)\b)",
    re.IGNORECASE,
)
# The clause a prompt ends on, when it asks afresh ("… the job log says: … - why does the
# connection time out?"): a pasted error and a question about it.
_LAST_CLAUSE = re.compile(r"(?:[.!?:;]\s+|\s[-—–]\s+)(?P<clause>[^.!?:;—–]+\?)\s*$")
_ASKS_WHY = re.compile(r"^\s*why\s+(?:is|are|does|do|would|can)\b(?!\s+(?:you|u)\b)", re.I)
# A demand said politely and briefly ("tests with every change pls", "just the number
# pls"), and a rule that outlives the answer ("from now on", "always", "anymore").
_DEMAND = re.compile(r"\b(?:pls|plz|please)\b", re.IGNORECASE)
_STANDING = re.compile(
    r"\b(?:from now on|going forward|always|anymore|any more|every (?:time|change)|each time|"
    r"with every|everywhere|every other)\b",
    re.IGNORECASE,
)
# What a person asks to have besides the change: the practices (sleep/mine/correction_checks.py)
# and tests.
TESTS = re.compile(r"\btests?\b|\btested\b|\btesting\b", re.IGNORECASE)
# A file's name, which a path or a name of the project's is (never an API).
FILE_NAME = re.compile(r"\.(?:py|js|ts|tsx|jsx|md|json|toml|ya?ml|txt|sh|go|rs|rb|java|cfg|ini)$")
_TERSE_WORDS = 3
_LAST_CLAUSE_CHARS = 400  # where a question ends a pasted log; never the whole of a long prompt
_LONG_WORDS = 15
_DEMAND_WORDS = 8
_MAX_CHANGES_CHARS = 20_000
# How `changes_of` marks an edited file's path and a command run, each on a line of its own.
EDITED = "+++ edited "
RAN = "$ ran "
THRESHOLD = 0.0


@dataclass(frozen=True)
class Before:
    """What a follow-up can refer back to: the request it would correct, the latest
    answer to it, the text of the edits and commands that answer made, and whether the
    person had stopped that answer."""

    request: str
    answer: str = ""
    changes: str = ""  # the edits' old and new text, the commands run
    interrupted: bool = False

    def paths(self) -> list[str]:
        """The files the answer edited."""
        return [ln[len(EDITED) :] for ln in self.changes.splitlines() if ln.startswith(EDITED)]

    def commands(self) -> list[str]:
        """The commands the answer ran (their first lines)."""
        return [ln[len(RAN) :] for ln in self.changes.splitlines() if ln.startswith(RAN)]

    def words(self) -> frozenset[str]:
        return frozenset(_stems(" ".join([self.request, self.answer, self.changes])))

    def names(self) -> frozenset[str]:
        text = " ".join([self.request, self.answer, self.changes])
        return frozenset(n for i in _IDENTIFIER.findall(text) for n in _name_forms(i))


@dataclass(frozen=True)
class Verdict:
    """A follow-up's reading: whether it corrects the answer before it, how strongly
    (the score; above THRESHOLD: a correction) and the signals that decided, as one line."""

    correction: bool
    score: float
    why: str


def judge(text: str, before: Before) -> Verdict:
    """Whether `text`, said after `before`, corrects that answer (see the module doc)."""
    split = _up_front(text)
    if split is not None:
        # "don't touch the tests: caption() should say …": the request after the head decides
        text = split[1]
    signals = _signals(text, before)
    score = round(sum(w for _s, w in signals), 2)
    correction = score > THRESHOLD
    said = [f"{s} ({w:+g})" for s, w in sorted(signals[1:], key=lambda p: -abs(p[1]))]
    why = f"{'correction' if correction else 'new request'} ({score:+g}): " + (
        "; ".join(said) or "nothing refers back"
    )
    return Verdict(correction, score, why)


def _signals(text: str, before: Before) -> list[tuple[str, float]]:
    """Each signal the follow-up gives, with its weight (positive: it corrects)."""
    text = _MARK.sub(" ", text)  # a redaction's mark is no name of the project's
    body = _OPENING.sub("", text).strip() or text.strip()
    signals: list[tuple[str, float]] = [("base", -0.5)]
    words = _stems(body)
    names = _IDENTIFIER.findall(body)
    known_words, known_names = before.words(), before.names()
    back_names = [
        n
        for n in names
        if set(_name_forms(n)) & known_names
        or (n.isidentifier() and _stem(n.lower()) in known_words)  # hours=0 after `hours`
    ]
    new_names = [n for n in names if n not in back_names]
    back_words = [w for w in words if w in known_words]
    wants = practices_named(body) + (["tests"] if TESTS.search(body) else [])
    new_words = [w for w in dict.fromkeys(words) if w not in known_words]
    form = {_stem(w.lower()) for w in _FORM.findall(body)}
    new_matter = [w for w in new_words if w not in form and not any(w in _stem(p) for p in wants)]
    size = len(body.split())
    # "… could you have a look?" asks the agent to act, as a verb of work does
    work = bool(_WORK.match(body) or _ASKS_AGENT_TO.search(body))
    asks = _asks_afresh(body)
    # a surprised "wait," before a question of its own is no push back ("wait, does upload()
    # give up after one timeout?"); before a report it is ("wait you deleted notes.txt??")
    worded = is_correction(body if asks and _SURPRISE.match(text) else text)
    if worded:
        signals.append(("worded as a correction", 1.5))
    if back_names:
        signals.append((f"names {', '.join(back_names[:2])} from the exchange",
                        min(2.0, 1.0 * len(back_names))))  # fmt: skip
    elif new_names and not work and not asks and not _SAID_OF_IT.match(body):
        # a name brought in to fix the thing made is no new matter ("that test needs wifi to
        # pass. monkeypatch fetch_rate")
        signals.append((f"names {', '.join(new_names[:2])}, new to the exchange",
                        -min(1.5, 0.75 * len(new_names))))  # fmt: skip
    if back_words:
        signals.append((f"{len(back_words)}/{len(words)} of its words are the exchange's",
                        round(1.5 * len(back_words) / len(words), 2)))  # fmt: skip
    if _SAID_OF_IT.match(body):
        signals.append(("said of the thing made", 0.75))
    elif _BACK_PRONOUN.search(body) and not new_names:
        signals.append(("a pronoun for the thing made", 0.5))
    if _AGENT_ACT.search(body):
        signals.append(("asks after the agent's own act", 1.5))
    # a fragment with no content of its own ("why?", "really?", "done?") says nothing of the
    # answer beyond an outright rejection ("no", "wrong")
    content = bool(names) or any(w not in _STOP for w in _WORD.findall(body.lower()))
    pushback = len(PUSHBACK.findall(_FORM_ASKED.sub(" ", body)))
    if not content and not _REJECTION.match(body):
        pushback = 0
    if pushback:
        signals.append(("pushes back", min(1.5, 0.75 * pushback)))
    if wants and not new_names:
        signals.append((f"asks for {wants[0]}", 0.5))
    if not work and not asks:
        terse = size <= _TERSE_WORDS and content
        if terse and (body.rstrip().endswith("?") or wants or back_names or form):
            signals.append(("a terse fragment", 1.0))
        elif body.rstrip().endswith("?") and content:
            signals.append(("a question about the reply", 0.5))
        required = _REQUIRED_OF.match(body)
        if required and _stem(required.group("thing").lower()) in known_words | known_names:
            signals.append((f"a requirement of {required.group('thing')}", 0.75))
        if _DEMAND.search(body) and size <= _DEMAND_WORDS:
            signals.append(("a short demand", 0.75))
    if _STANDING.search(body):
        signals.append(("a standing rule", 0.5))
    # the person stopped the answer and says what they wanted of it instead
    redirect = before.interrupted and bool(pushback)
    if redirect:
        signals.append(("redirects the stopped answer", 1.0))
    new_object = bool(new_names) or len(new_matter) >= 2
    what = ", ".join(new_names[:2]) or ", ".join(new_matter[:3])
    reshapes = work and bool(_RESHAPES.match(body))
    if reshapes:
        signals.append(("reshapes the thing made", 0.5))
    if work and not reshapes and (new_names or new_matter):  # the object of a verb of work is new
        signals.append((f"new work on {what}", -2.0))
    if _MOVES_ON.search(body) and (work or _NEXT_UP.match(body)):
        signals.append(("moves on", -1.0))
    extends = bool(_EXTENDS.search(body)) and (work or bool(_USE.match(body)))
    if extends:
        signals.append(("extends the work to more", -2.0))
    elif work and not (pushback or worded or _AGENT_ACT.search(body) or _BACK_PRONOUN.search(body)):
        # an imperative with nothing refused asks for more work, even on the thing just
        # made ("add a test for archive_old"); pointing at it ("make it a subcommand")
        # reshapes the answer
        signals.append(("asks for more work", -2.5))
    if _WHAT_IF.search(body):
        signals.append(("asks what would happen", -2.0))
    if _HOW_DO_I.match(body):
        signals.append(("asks how to do it", -1.0))
    # a short question's pronoun is the thing made; a longer one names its own referent
    # ("the uploader says 401 with token … - is it expired?")
    first = _FIRST_QUESTION.match(body)
    asked = first.group(0) if first else body
    pointed = (
        bool(_BACK_PRONOUN.search(asked)) and not new_names and len(asked.split()) <= _DEMAND_WORDS
    )
    if asks and not (pointed or redirect):
        # a question of its own; the more so when it is about something new
        signals.append((f"asks afresh about {what}", -1.5) if new_object else ("asks afresh", -0.5))
    anchored = (
        back_names
        or _BACK_PRONOUN.search(body)
        or _AGENT_ACT.search(body)
        or _AS_IT_WAS.search(body)
    )
    if not (work or asks or anchored) and len(new_matter) >= 3 and len(back_words) * 4 < len(words):
        # a statement about something the exchange never touched ("the report shouldn't
        # include cancelled orders" after an answer about the login page)
        signals.append((f"brings new matter: {', '.join(new_matter[:3])}", -1.0))
    if size > _LONG_WORDS:
        signals.append(("long", round(-0.1 * (size - _LONG_WORDS), 2)))
    return signals


def _asks_afresh(body: str) -> bool:
    """A full question whose subject is not the agent, at the start or as the last clause
    ("is format_total locale aware?", "… - is the token expired or missing a scope?")."""
    last = _LAST_CLAUSE.search(body[-_LAST_CLAUSE_CHARS:])
    clauses = [body] + ([last.group("clause")] if last else [])
    return any(_ASKS.match(c) or _ASKS_WHY.match(c) for c in clauses)


def changes_of(prompt: dict[str, Any]) -> str:
    """The text of what a turn did (its edits' old and new text, the commands it ran): a
    correction names what is in it ("why os.path?" after a diff that uses os.path)."""
    parts = [f"{EDITED}{e.get('path', '')}\n{e.get('old', '')}\n{e.get('new', '')}"
             for e in prompt.get("edits", []) if isinstance(e, dict)]  # fmt: skip
    parts += [f"{RAN}{c}" for c in prompt.get("commands", []) if isinstance(c, str)]
    return "\n".join(parts)[:_MAX_CHANGES_CHARS]


def redirected(prompts: list[dict[str, Any]], index: int) -> bool:
    """An interrupted prompt the person followed with a correction of what they asked
    ("never mind the long version, just tell me …"): a task after all."""
    stopped = prompts[index]
    if not stopped.get("interrupted"):
        return False
    after = next((p for p in prompts[index + 1 :] if (p.get("text") or "").strip()), None)
    if after is None or after.get("interrupted"):
        return False
    before = Before(str(stopped.get("text") or ""), str(stopped.get("answer") or ""),
                    changes_of(stopped), interrupted=True)  # fmt: skip
    return judge(str(after.get("text") or "").strip(), before).correction


def correction_then_request(text: str, before: Before) -> tuple[str, str] | None:
    """A prompt whose head corrects the last answer and whose rest is the next request
    ("thx. tests with every change pls. next: add …"): (the head, the request), or None."""
    split = head_and_next(text)
    if split is None or not judge(split[0], before).correction:
        return None
    return split


def stated_up_front(text: str) -> str | None:
    """The constraint heading a request ("always add a test with the change - give
    report.py a daily_max(readings)", "all timestamps in UTC please: add since(…)", "no
    real http in tests, patch it out. add a retry to fetch_rate …"): the head, when the
    rest opens on a verb of work and the head is no request itself."""
    split = _up_front(text)
    return split[0] if split else None


def _up_front(text: str) -> tuple[str, str] | None:
    """(the constraint heading a request, the request), or None (see `stated_up_front`)."""
    if head_and_next(text) is not None:
        return None
    match = _HEADED.match(text)
    if match is not None and not _MARKER_HEAD.match(match.group("head")):
        head, tail = match.group("head").strip(), match.group("tail")
        if heads_a_request(text):
            return head, tail
        if len(tail.split()) >= 3 and _WORK.match(tail) and not _WORK.match(head):
            return head, tail
    # a sentence of its own before a request whose object is named, not pointed back at
    # ("… patch it out. add a retry to fetch_rate: …"; not "… the cli is argparse. make it
    # a subcommand like balance", which reshapes the answer)
    match = _SENTENCE_HEADED.match(text)
    if match is None or _MARKER_HEAD.match(match.group("head")):
        return None
    head, tail = match.group("head").strip(), match.group("tail")
    first_clause = re.split(r"[,:;]", tail, maxsplit=1)[0]
    if (
        len(tail.split()) >= _REQUEST_WORDS
        and _WORK.match(tail)
        and not _WORK.match(head)
        and not _BACK_PRONOUN.search(first_clause)
    ):
        return head, tail
    return None


_MARK = re.compile(r"\[REDACTED:[\w.-]*\]")
_HEADED = re.compile(r"^(?P<head>[^:\n]{3,80}?)(?::\s+|\s+[-—–]\s+)(?P<tail>.+)$", re.S)
_SENTENCE_HEADED = re.compile(r"^(?P<head>[^.!?:\n]{3,80}?)[.!]\s+(?P<tail>.+)$", re.S)
_REQUEST_WORDS = 5
# A head that only announces what follows ("one more thing:", "quick question -", "also,
# next:") demands nothing: the request after it is the whole prompt.
_MARKER_HEAD = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|also|btw|now|next|then|finally|lastly|last|oh|right)(?:\W+|$))*"
    r"(?:(?:one|another|a|the|last|final|quick|small|little|tiny|separate)\s+)*"
    r"(?:more\s+)?(?:thing|question|q|request|ask|tweak|change|one|note|idea)?\W*$",
    re.IGNORECASE,
)


def _stems(text: str) -> list[str]:
    """Content words, lowercased and cut to a rough stem ("returning" ~ "returns"), the
    parts of identifiers included (parse_line: parse, line)."""
    out = []
    for word in _WORD.findall(text.lower().replace("_", " ")):
        if word in _STOP or len(word) < 3:
            continue
        out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _name_forms(name: str) -> list[str]:
    """How an identifier may be written elsewhere: `os.path.join(a, b)` is also os.path
    and join; parse_since(text) is parse_since."""
    bare = name.strip("`").lower()
    bare = re.sub(r"\(.*\)$", "", bare).strip().lstrip("-")
    forms = [bare]
    if "." in bare and not FILE_NAME.search(bare):
        parts = bare.split(".")
        forms += [".".join(parts[:i]) for i in range(2, len(parts))] + [parts[-1]]
    return [f for f in forms if f]
