"""The coding-agent CLIs as backends: one small module per agent (claude_code, codex, pi,
opencode, copilot) stating only its flags, event names and login, over one shared shape
(cli: the call, chat use and agent use) — how a process is run, bounded and reaped
(process, reaper), where the CLI keeps its login and how it is lent (login), what a
failure means (failure), the workspace a task runs in and where the skill is placed
(workspace), how far the agent is confined (confinement), and what its event stream says
(events)."""
