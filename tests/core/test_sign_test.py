"""The sign test against values computed by hand: p = 2 * sum_{i<=min} C(n, i) / 2^n."""

import pytest

from core.sign_test import evidence_trailer, sign_test_p


@pytest.mark.parametrize(
    ("improved", "regressed", "p"),
    [
        (5, 0, 0.0625),  # 2 * 1/32
        (6, 0, 0.03125),  # 2 * 1/64
        (0, 6, 0.03125),  # two-sided: regressions count the same
        (3, 1, 0.625),  # 2 * (1 + 4)/16
        (1, 0, 1.0),  # 2 * 1/2
        (2, 2, 1.0),  # capped at 1
        (8, 2, 0.109375),  # 2 * (1 + 10 + 45)/1024
        (0, 0, 1.0),  # nothing changed: no evidence
    ],
)
def test_sign_test_matches_hand_computed_values(improved, regressed, p):
    assert sign_test_p(improved, regressed) == pytest.approx(p, abs=1e-12)


def test_the_trailer_is_short_and_exact_at_small_counts():
    assert evidence_trailer(5, 0) == "p=0.0625"
    assert evidence_trailer(6, 0) == "p=0.03125"
    assert evidence_trailer(3, 1) == "p=0.625"
    assert evidence_trailer(0, 0) == "p=1"
    assert evidence_trailer(20, 0) == "p=1.907e-06"  # 2 / 2^20


def test_negative_counts_are_refused():
    with pytest.raises(ValueError, match="counts must be >= 0"):
        sign_test_p(-1, 2)
