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


def test_leading_word_density_is_the_published_share_of_eleven_words():
    from core.skill.rule_density import leading_word_density

    assert leading_word_density("") == 0.0
    # must, never, only of 7 words (any case, anywhere in the text)
    assert leading_word_density("MUST answer. Never guess; only the city.") == 3 / 7
    block = (
        "\n<!-- skillopt:slow-update:start -->\nALWAYS VERIFY\n<!-- skillopt:slow-update:end -->\n"
    )
    assert leading_word_density("Answer with the city." + block) == 0.0  # blocks excluded


def test_shipped_seed_skills_read_as_the_published_formula_reads_them():
    """Issue 22: the published leading-word share of the seed skills is a few hundredths
    (0.000-0.030 measured), where our imperative share reads about half (0.49-0.72): a
    term more than ten times smaller."""
    from pathlib import Path

    from core.skill.rule_density import leading_word_density

    seeds = sorted(Path(__file__).resolve().parents[3].glob("envs/*/initial.md"))
    assert len(seeds) >= 6
    for seed in seeds:
        text = seed.read_text(encoding="utf-8")
        assert 0.0 <= leading_word_density(text) <= 0.05, seed
        assert leading_word_density(text) < rule_density(text) / 10, seed
