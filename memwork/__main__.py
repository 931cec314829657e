"""``python -m memwork`` runs the CLI, as the ``memwork`` command does."""

from .core.cli.main import entry

if __name__ == "__main__":
    entry()
