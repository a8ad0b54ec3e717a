"""Optimizer strategies: the strategy protocol, the `llm` analysts/merge/rank with their
prompts and JSON parsing, the deterministic `fewshot` strategy, and the rejected-edit buffer."""
