from core.skill.protected_blocks import SLOW_UPDATE_BLOCK, write_block
from core.skill.rule_density import rule_density


def test_share_of_words_in_imperative_rules():
    assert rule_density("") == 0.0
    assert (
        rule_density("# Capitals\n\n- Answer with only the city name.\n") == 6 / 7
    )  # "Capitals" is not a rule
    prose = "# Capitals\n\nThis skill is about capitals. Answer with the name.\n"
    assert rule_density(prose) == 4 / 10  # "Answer with the name" of 10 words
    assert rule_density("You must cite. Paris is big.") == 3 / 6


def test_protected_blocks_are_excluded():
    base = "# Capitals\n\nParis is in France.\n"
    guided = write_block(base, SLOW_UPDATE_BLOCK, "Always answer. Never guess. Use names.")
    assert rule_density(guided) == rule_density(base) == 0.0
