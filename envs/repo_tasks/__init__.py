"""`repo_tasks`: coding tasks in tiny repositories, done by a coding agent (see environment.py)."""
