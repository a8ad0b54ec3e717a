"""How sure a gate's verdict is: the exact two-sided sign test over paired items.

The gate accepts a candidate whose mean val score beats the best; on a handful of items
one lucky item can do that. The sign test asks a narrower question of the same pairs:
of the items whose score changed (ties dropped), is "improved" more common than a coin
would make it? Its p-value goes on the staged commit (`Evidence: p=…`), so a reviewer
sees that 1 improved and 0 regressed (p=1) is no evidence and 6 of 6 (p=0.03125) is some.
Exact (binomial with p=1/2), so it is right at the small counts a night has.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb


def sign_test_p(improved: int, regressed: int) -> float:
    """The two-sided exact sign-test p-value for `improved` items up and `regressed`
    down (ties already left out): the chance, under "a change is as likely up as down",
    of a split at least this lopsided either way. 1.0 when nothing changed."""
    if improved < 0 or regressed < 0:
        raise ValueError(f"counts must be >= 0, got {improved} improved, {regressed} regressed")
    n = improved + regressed
    if n == 0:
        return 1.0
    low = min(improved, regressed)
    tail = Fraction(sum(comb(n, i) for i in range(low + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


def sign_test_p_greater(improved: int, regressed: int) -> float:
    """The one-sided exact sign-test p-value for "changes go up more often than down":
    the chance of at least `improved` ups among the changed items if each were a coin
    flip. What a gate asks (is the candidate better?), where the staged commit's two-sided
    p asks whether it differs at all. 1.0 when nothing changed."""
    if improved < 0 or regressed < 0:
        raise ValueError(f"counts must be >= 0, got {improved} improved, {regressed} regressed")
    n = improved + regressed
    if n == 0:
        return 1.0
    return float(Fraction(sum(comb(n, i) for i in range(improved, n + 1)), 2**n))


def evidence_trailer(improved: int, regressed: int) -> str:
    """The `Evidence` trailer's value: `p=0.0625`, four significant digits at most."""
    return f"p={sign_test_p(improved, regressed):.4g}"
