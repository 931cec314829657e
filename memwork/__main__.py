"""``python -m memwork`` runs the CLI, as the ``memwork`` command does."""

from memwork.core.doors.cli.main import entry

if __name__ == "__main__":
    entry()
