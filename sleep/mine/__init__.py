"""Mine: turn harvested prompts into replayable tasks with kinds, evidence, checks and splits.

Takes: `sleep.harvest` sessions. Gives: `mine.tasks.MinedTask`s (rubric, reference,
checks, context, prior edits) and their train/val split. Imports `sleep.harvest`,
`sleep.redact`, `sleep.state` and the Sleep prompts; never `sleep.night.run`.
"""
