"""memwork core: domain, storage, context export and CLI. Never imports textual.

Installed as ``memwork.core``; agents use ``from memwork import Memory``.
"""

from __future__ import annotations

__version__ = "0.1.0"
