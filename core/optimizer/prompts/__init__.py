"""The optimizer's prompts, one Markdown file each, filled by core.optimizer.prompt_templates."""
