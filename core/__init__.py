"""memwork core: domain, storage, context export and CLI. Never imports textual."""

__version__ = "0.1.0"
