"""Skill text: the document (frontmatter, bytes, hash), bounded edits, protected blocks and
the free checks a candidate must pass before any rollout is spent on it."""
