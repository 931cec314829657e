"""A record's age as a number: what orders records of equal scores the same way in
every process.

Each process numbers the records it indexes by slots, in the order it happens to
index them: one kept up write by write, one that read the saved file, one that built
its index afresh from the store and one following a Redis store each give the same
records other slots. Picking by slot among equal scores (the best hundred candidates
of a query, the hits handed out) so chose other records in other processes. An age
comes from the record's id, which is made time-ordered when the record is made
(:mod:`core.base.ids`): the later made, the larger, in every process alike.
"""

from __future__ import annotations

from ...base.hashing import blake2b
from ...base.ids import decode

_BODY = 26  # an id's time-ordered body: 10 digits of milliseconds, 16 of randomness
_MS = (1 << 48) - 1


def age_key(ref: str) -> int:
    """The age of the record ``ref`` names (``ses_…/obs_01J…``, ``ep_01J…``): its id's
    milliseconds, then the last 15 bits of its randomness (a process that makes several
    in one millisecond counts them up there), as one number below 2**63. A ref without
    such an id (a slot's name) gets a fixed negative number from its text: older than
    every id'd record, in the same order everywhere."""
    body = ref.rpartition("/")[2].partition("_")[2]
    if len(body) == _BODY:
        try:
            ms, low = decode(body[:10]), decode(body[-3:])
        except ValueError:
            pass
        else:
            return (ms & _MS) << 15 | low
    digest = blake2b(ref.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return -1 - (int.from_bytes(digest, "big") >> 2)
