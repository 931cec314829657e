"""What is built from the kinds of memory: recall, the context export, import and export,
review, history, checkpoints, lint, stats and the doctor.
"""
