"""`skillopt integrations`: put SkillOpt inside the agents users run (Claude Code, Codex).

Each agent is a list of file changes under the user's home: whole files we own (a skill,
slash commands) and entries we add to the agent's own config (an MCP server). Installing
records what it did, backing up anything it replaces; uninstalling undoes exactly that, so
an install/uninstall round trip leaves the home byte-identical.
"""
