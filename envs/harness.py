"""The two framings a benchmark can give its target (env option `harness`): `published`,
the SkillOpt 0.2.0 harness restated in our words (a system prompt of the environment's own,
`prompts/target_system.md`, with the skill inside it under `## Skill`), and `skill_only`,
our earlier framing kept as the overlay `<benchmark>_skill_only` (the skill alone as the
system prompt). docs/how-it-works/fidelity.md lists what each benchmark's harness holds."""

from __future__ import annotations

from functools import cache
from pathlib import Path

PUBLISHED = "published"
SKILL_ONLY = "skill_only"
HARNESSES = (PUBLISHED, SKILL_ONLY)
SKILL_SLOT = "{skill_section}"


def skill_section(skill_text: str) -> str:
    """The skill under a `## Skill` heading and a blank line, or nothing for an empty skill."""
    return f"## Skill\n{skill_text.strip()}\n\n" if skill_text.strip() else ""


@cache
def prompt_file(path: Path) -> str:
    """A benchmark's prompt file, read once per process: it is wanted for every rollout
    (every step of an ALFWorld episode), and the package's files do not change under it."""
    return path.read_text(encoding="utf-8")


def framed_system(template: Path, skill_text: str) -> str:
    """The template with the skill's section where it says `{skill_section}`."""
    return prompt_file(template).replace(SKILL_SLOT, skill_section(skill_text))


def skill_only_system(skill_text: str) -> list[dict[str, str]]:
    """Our earlier framing's system message: the skill alone, none when it is empty."""
    return [{"role": "system", "content": skill_text}] if skill_text.strip() else []


def untagged_answer(harness: str) -> str:
    """envs.answer_tag's rule for a reply without an <answer> tag: its last line under the
    published harnesses (a reply that reasons step by step ends with its answer), the
    whole reply under ours."""
    return "last_line" if harness == PUBLISHED else "whole"
