"""The third corrections corpus (issue 37): held out. The second (photos_script.py) was
unseen until its first figures were taken and then mining was fixed against it, so its
later figures are development figures too; this one is labelled before mining runs on it
and is never fixed against, so its figures say how the fixed mining generalises.

The project is a recipe box (scaling quantities, kitchen units, a shopping list) in
typed Python with docstrings, tested by a `make test` whose recipe calls `python`. The
model leaves out docstrings, formats strings with % and .format(), commits on its own and
rewraps code it was not asked to touch. The person writes in their own way: a thumbs-up
for thanks, "docstring?", "where's the docstring? every other function in units.py has
one", "why did you commit??", a constraint up front ("dont commit anything, just make the
change: …"), and one correction after stopping a walk-through with Escape.
"""

from __future__ import annotations

from tests.support.corrections_script import (
    JUDGE,
    SHORT,
    YES_NO,
    CheckFit,
    Edit,
    Read,
    Run,
    Session,
    Turn,
    acknowledgement,
    correction,
)

PROJECT = "work/recipe-box"
FIRST_COMMIT = "recipe-box: scaling, units, shopping list"
TITLE = "Recipe box work"

_SCALE = '''"""Scaling a recipe to more or fewer servings."""

from fractions import Fraction


def scale(quantity: Fraction, servings_from: int, servings_to: int) -> Fraction:
    """The quantity for `servings_to` servings of a recipe written for `servings_from`."""
    return quantity * Fraction(servings_to, servings_from)


def label(quantity: Fraction, unit: str) -> str:
    """'1 1/2 cup': the whole part, then what is left as a fraction."""
    whole, rest = divmod(quantity, 1)
    parts = [str(whole)] if whole else []
    if rest:
        parts.append(str(Fraction(rest)))
    return f"{' '.join(parts) or '0'} {unit}"
'''

_UNITS_TABLE = 'MILLILITRES = {"tsp": Fraction(5), "tbsp": Fraction(15), "cup": Fraction(240)}\n'
_UNITS = f'''"""Kitchen units and how many millilitres each holds."""

from fractions import Fraction

{_UNITS_TABLE}

def to_ml(quantity: Fraction, unit: str) -> Fraction:
    """`quantity` of `unit` in millilitres; a KeyError names an unknown unit."""
    return quantity * MILLILITRES[unit]
'''

_SHOPPING = '''"""The shopping list: the same ingredient from several recipes, added up."""

from fractions import Fraction


def merge(items: list[tuple[str, Fraction, str]]) -> dict[tuple[str, str], Fraction]:
    """(name, quantity, unit) rows summed per (name, unit); names are case-blind."""
    total: dict[tuple[str, str], Fraction] = {}
    for name, quantity, unit in items:
        key = (name.lower(), unit)
        total[key] = total.get(key, Fraction(0)) + quantity
    return total
'''

_TESTS = """from fractions import Fraction

from scale import label, scale
from shopping import merge
from units import to_ml


def test_scale_doubles():
    assert scale(Fraction(3, 4), 2, 4) == Fraction(3, 2)


def test_label_splits_whole_and_fraction():
    assert label(Fraction(3, 2), "cup").startswith("1 1/2 cup")


def test_to_ml():
    assert to_ml(Fraction(2), "tbsp") == 30


def test_merge_is_case_blind():
    rows = [("Flour", Fraction(1), "cup"), ("flour", Fraction(1, 2), "cup")]
    assert merge(rows) == {("flour", "cup"): Fraction(3, 2)}
"""

PROJECT_FILES = {
    "scale.py": _SCALE,
    "units.py": _UNITS,
    "shopping.py": _SHOPPING,
    "tests/test_recipes.py": _TESTS,
    "Makefile": "test:\n\tpython -m pytest -q\n",
    "README.md": "# recipe-box\n\nScales recipes and adds up shopping lists. `make test` runs the tests.\n",
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
}

PREFERENCES = {
    "docstrings": "every new function gets a docstring",
    "f-strings": "f-strings, not % or .format()",
    "no-commit": "don't commit: the person reviews and commits",
    "small-diff": "don't reformat code the change does not need",
    "short": "short answers",
}

DOCSTRING = CheckFit(("diff_adds",), r'"""|docstring')
F_STRING = CheckFit(("diff_adds", "diff_not_adds"), r"f\[|%|format")

# A database password pasted inside a connection URL from a job log: it must be redacted.
PLANTED_SECRET = "Fixture0Pass0never0real0Zq8"


_c, _ack = correction, acknowledgement  # short names for the sessions below


_TABLE_REFLOWED = (
    "MILLILITRES = {\n"
    '    "tsp": Fraction(5),\n'
    '    "tbsp": Fraction(15),\n'
    '    "cup": Fraction(240),\n'
    "}\n"
)
_TO_ML_END = "    return quantity * MILLILITRES[unit]\n"
_FROM_ML = (
    "\n\ndef from_ml(ml: Fraction, unit: str) -> Fraction:\n    return ml / MILLILITRES[unit]\n"
)
_LABEL_RETURN = "    return f\"{' '.join(parts) or '0'} {unit}\"\n"
_LABEL_PERCENT = (
    '    unit = unit + "s" if quantity > 1 and not unit.endswith("s") else unit\n'
    "    return \"%s %s\" % (' '.join(parts) or '0', unit)\n"
)
_LABEL_FSTRING = (
    '    unit = unit + "s" if quantity > 1 and not unit.endswith("s") else unit\n' + _LABEL_RETURN
)
_MERGE_END = "    return total\n"
_TOTAL_ML_RETURN = "    return sum((to_ml(q, u) for _n, q, u in items), start=Fraction(0))\n"
_TOTAL_ML = (
    "\n\ndef total_ml(items: list[tuple[str, Fraction, str]]) -> Fraction:\n" + _TOTAL_ML_RETURN
)
_SCALE_SIG = "def scale(quantity: Fraction, servings_from: int, servings_to: int) -> Fraction:\n"
_SCALE_SIG_WRAPPED = (
    "def scale(\n    quantity: Fraction,\n    servings_from: int,\n    servings_to: int,\n"
    ") -> Fraction:\n"
)
_SCALE_DOC = (
    '    """The quantity for `servings_to` servings of a recipe written for `servings_from`."""\n'
)
_REFUSE_ZERO = (
    "    if servings_from == 0:\n"
    '        raise ValueError(f"a recipe for {servings_from} servings cannot be scaled")\n'
)

_LONG_MERGE = """Sure! Let's go through merge() line by line.

Line 1: total starts as an empty dict keyed by (name, unit).
Line 2: the loop unpacks each (name, quantity, unit) row..."""

_LONG_TBSP = """Yes. In units.py the table holds tsp as 5 ml and tbsp as 15 ml, so one tbsp is
15 / 5 = 3 tsp exactly. That matches the usual US and UK kitchen measures (an Australian
tablespoon is 20 ml, which would be 4 tsp, but the table does not model that). A cup is
240 ml, which makes it 16 tbsp or 48 tsp. If you ever add metric cups (250 ml) the ratios
change, so it may be worth a test that pins tbsp == 3 * tsp."""

SESSIONS: list[Session] = [
    # ------------------------------------------------------------------ batch 1 (day 1)
    Session("c1", "claude", 1, [
        Turn("add a from_ml(ml, unit) to units.py, the inverse of to_ml",
             "Added from_ml(ml, unit) to units.py and tidied the MILLILITRES table.",
             (Read("units.py"),
              Edit("units.py", ((_UNITS_TABLE, _TABLE_REFLOWED),
                                (_TO_ML_END, _TO_ML_END + _FROM_ML)))),
             request="r-from-ml", kind="agentic"),
        Turn("where's the docstring? every other function in units.py has one",
             "Added a docstring to from_ml.",
             (Edit("units.py", (("    return ml / MILLILITRES[unit]\n",
                                 '    """`ml` millilitres in `unit`: the inverse of to_ml."""\n'
                                 "    return ml / MILLILITRES[unit]\n"),)),),
             role="correction",
             corrections=(_c("docstrings", "r-from-ml", "after", DOCSTRING),)),
        Turn("also why is MILLILITRES reformatted, I didnt ask for that",
             "Put MILLILITRES back on one line as it was.",
             (Edit("units.py", ((_TABLE_REFLOWED, _UNITS_TABLE),)),),
             role="correction",
             corrections=(_c("small-diff", "r-from-ml", "after", JUDGE),)),
        _ack("👍"),
    ], commit="units: from_ml"),
    Session("x1", "codex", 1, [
        Turn("label() should say cups not cup when theres more than one",
             "label() now pluralises the unit above one, and I committed it.",
             (Edit("scale.py", ((_LABEL_RETURN, _LABEL_PERCENT),)),
              Run("git commit -qam 'label: plural units'")),
             request="r-plural", kind="agentic"),
        Turn("f-strings pls, we dont do % formatting anymore",
             "label() builds its text with an f-string again.",
             (Edit("scale.py", ((_LABEL_PERCENT, _LABEL_FSTRING),)),),
             role="correction",
             corrections=(_c("f-strings", "r-plural", "after", F_STRING),)),
        Turn("and dont commit for me, I review everything before it goes in",
             "Undid my commit; the change is in your working tree to review.",
             (Run("git reset -q --soft HEAD~1"),), role="correction",
             corrections=(_c("no-commit", "r-plural", "after", JUDGE),)),
        Turn("add a total_ml(items) to shopping.py that adds everything up in millilitres",
             "Added shopping.total_ml(items).",
             (Edit("shopping.py", (("from fractions import Fraction\n",
                                    "from fractions import Fraction\n\nfrom units import to_ml\n"),
                                   (_MERGE_END, _MERGE_END + _TOTAL_ML))),),
             request="r-total-ml", kind="agentic"),
        Turn("docstring?", "Added one: total_ml sums every row in millilitres.",
             (Edit("shopping.py", ((_TOTAL_ML_RETURN,
                                    '    """Every row in millilitres, added up."""\n'
                                    + _TOTAL_ML_RETURN),)),),
             role="correction",
             corrections=(_c("docstrings", "r-total-ml", "after", DOCSTRING),)),
        _ack("ty"),
    ], commit="scale: plural units; shopping: total_ml"),
    Session("c2", "claude", 1, [
        Turn("add docstrings to anything new — round_to_quarter(q) in scale.py that rounds "
             "to the nearest 1/4",
             "Added round_to_quarter(q) with a docstring, and committed it.",
             (Read("scale.py"),
              Edit("scale.py", ((_LABEL_RETURN,
                                 _LABEL_RETURN + "\n\ndef round_to_quarter(q: Fraction) -> "
                                 "Fraction:\n"
                                 '    """`q` rounded to the nearest quarter."""\n'
                                 "    if q < 0:\n"
                                 '        raise ValueError("negative quantity: {}".format(q))\n'
                                 "    return Fraction(round(q * 4), 4)\n"),)),
              Run("git commit -qam 'scale: round_to_quarter'")),
             request="r-quarter", kind="agentic",
             corrections=(_c("docstrings", "r-quarter", "up_front", DOCSTRING,
                             "add docstrings to anything new"),)),
        Turn("why did you commit?? leave committing to me",
             "Sorry: undid the commit, the change is back in your working tree.",
             (Run("git reset -q --soft HEAD~1"),), role="correction",
             corrections=(_c("no-commit", "r-quarter", "after", JUDGE),)),
        Turn("also .format() in new code, really? f-string",
             "The error message is an f-string now.",
             (Edit("scale.py", (('        raise ValueError("negative quantity: {}".format(q))\n',
                                 '        raise ValueError(f"negative quantity: {q}")\n'),)),),
             role="correction",
             corrections=(_c("f-strings", "r-quarter", "after", F_STRING),)),
        _ack("ok"),
    ], commit="scale: round_to_quarter"),
    # ------------------------------------------------------------------ batch 2 (day 2)
    Session("x2", "codex", 2, [
        Turn("dont commit anything, just make the change: scale() should refuse "
             "servings_from=0 with a clear ValueError",
             "scale() now raises ValueError when servings_from is 0.",
             (Edit("scale.py", ((_SCALE_SIG + _SCALE_DOC,
                                 _SCALE_SIG_WRAPPED + _SCALE_DOC + _REFUSE_ZERO),)),),
             request="r-zero", kind="agentic",
             corrections=(_c("no-commit", "r-zero", "up_front", JUDGE,
                             "dont commit anything, just make the change"),)),
        Turn("pls keep the diff small, you rewrapped the signature for no reason",
             "The signature is back on one line; only the check is new.",
             (Edit("scale.py", ((_SCALE_SIG_WRAPPED, _SCALE_SIG),)),),
             role="correction",
             corrections=(_c("small-diff", "r-zero", "after", JUDGE),)),
        Turn("is a tbsp 3 tsp in our table?", _LONG_TBSP, (Read("units.py"),),
             request="r-tbsp", kind="advice"),
        Turn("tldr pls, yes or no", "Yes.", role="correction",
             corrections=(_c("short", "r-tbsp", "after", YES_NO),)),
        Turn("the import job logs postgres://recipes:" + PLANTED_SECRET + "@db.internal:5432/"
             "recipes and then hangs - is it the db or the network?",
             "A hang right after connecting points at the network path to db.internal "
             "(a firewall dropping packets) more than at the database itself.",
             request="r-hang", kind="advice"),
        _ack("thx"),
    ], commit="scale: refuse servings_from=0"),
    Session("c3", "claude", 2, [
        Turn("walk me through merge() in shopping.py line by line", _LONG_MERGE,
             interrupt=True, request="r-walk", kind="advice"),
        Turn("too slow. just tell me if it treats Flour and flour as the same",
             "Yes: it lowercases the name before adding up.",
             (Read("shopping.py"),), role="correction",
             corrections=(_c("short", "r-walk", "after_interrupt", SHORT),)),
        Turn("add butter in grams to units.py (1 cup = 227 g), dont touch the other units",
             "Added to_grams(quantity, unit) for butter.",
             (Read("units.py"),
              Edit("units.py", ((_TO_ML_END,
                                 _TO_ML_END + "\n\nBUTTER_GRAMS_PER_CUP = Fraction(227)\n\n\n"
                                 "def butter_grams(quantity: Fraction, unit: str) -> Fraction:\n"
                                 "    if unit not in MILLILITRES:\n"
                                 '        raise KeyError("unknown unit: %s" % unit)\n'
                                 "    return to_ml(quantity, unit) / MILLILITRES[\"cup\"] * "
                                 "BUTTER_GRAMS_PER_CUP\n"),))),
             request="r-butter", kind="agentic",
             corrections=(_c("small-diff", "r-butter", "up_front", JUDGE,
                             "dont touch the other units"),)),
        Turn("no docstring again.. and f-strings, not %",
             "butter_grams has a docstring and an f-string message now.",
             (Edit("units.py", (('        raise KeyError("unknown unit: %s" % unit)\n',
                                 '        raise KeyError(f"unknown unit: {unit}")\n'),
                                ("    if unit not in MILLILITRES:\n",
                                 '    """`quantity` of `unit` of butter, in grams."""\n'
                                 "    if unit not in MILLILITRES:\n"))),),
             role="correction",
             corrections=(_c("docstrings", "r-butter", "after", DOCSTRING),
                          _c("f-strings", "r-butter", "after", F_STRING))),
        _ack("thanks"),
    ], commit="units: butter in grams"),
]  # fmt: skip
