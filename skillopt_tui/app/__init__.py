"""The Textual face of SkillOpt: a thin App (app.py), screens, widgets, messages, styles.

Everything the app shows comes from run directories and the skills repository; slow work
runs in workers and comes back as messages (messages.py)."""
