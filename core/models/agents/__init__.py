"""The coding-agent CLIs as backends: one small module per agent (claude_code, codex, pi,
opencode, copilot) over a shared base — how a role's settings reach the CLI (cli), how a
process is run, bounded and reaped (process, reaper), the workspace a task runs in and
where the skill is placed (workspace), how far the agent is confined (confinement), and
what its event stream says (events)."""
