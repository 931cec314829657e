"""The doctor: checks a store (folder or Redis) and says what it finds."""
