"""The kinds of memory and their rules: episodes, mistake cards, lessons and rules, slots,
sessions, working memory, actions, profiles and failures. Plain functions over the store.
"""

# Whoever uses the domain can open a store written by an older memwork.
from . import migrations as _migrations  # noqa: E402, F401
