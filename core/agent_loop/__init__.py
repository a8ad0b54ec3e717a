"""Our own bounded tool loop for chat (API) backends: a workspace copy of a project, tools
confined to it, and the loop that lets a model use them (DESIGN: Sleep replays agentic
tasks as agent runs, whatever the backend)."""
