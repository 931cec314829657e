"""Context export: the prompt-context string agents fetch on every step."""
