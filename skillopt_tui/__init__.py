"""SkillOpt TUI: the faces (CLI and Textual app) over the headless engine."""

__version__ = "0.1.0"
