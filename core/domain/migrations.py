"""The schema steps that rewrite records, registered with storage's table of steps.

Storage knows the schema versions and runs the steps in order inside one
transaction; what a step does to records is domain work, so the steps are
registered here, by importing this module (the doors and the workbench do before
they open a store; importing any of ``memwork.core.domain`` does too).
"""

from __future__ import annotations

from ..storage import schema
from ..storage.store import Store


def _rule_archive_in_chunks(store: Store) -> None:
    """1 → 2: inactive rules move from hash buckets to chunks in arrival order with an
    index of their texts (core/domain/rule_archive.py), so recording stops rewriting the
    whole archive."""
    from . import rule_archive

    rule_archive.convert_legacy(store)


def _relations_as_links(store: Store) -> None:
    """3 → 4: the relation fields of records (a lesson's ``superseded_by`` and
    ``supersedes``, a card's ``merged_from`` and ``episode_ids``, a rule's
    ``episode_ids``) become links (core/ledger/links.py), one model for every relation."""
    from ..base.clock import now
    from ..ledger import links

    links.convert_legacy(store, now())


schema.register(1, _rule_archive_in_chunks)
schema.register(3, _relations_as_links)
