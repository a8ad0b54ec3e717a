"""The optimizer's prompts, one Markdown file each, filled by core.prompt_templates."""
