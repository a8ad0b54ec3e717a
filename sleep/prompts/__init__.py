"""Prompts of the Sleep cycle (judge, miner), one Markdown file each."""
