"""Working memory: short-lived keys of a session, a project or everyone, with TTLs."""
