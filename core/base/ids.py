"""Record ids: short prefix + a time-ordered ULID-style body.

Ids sort by creation time (so a store diffs in a readable order) and are
unique across processes without coordination. Tests and the demo generator
call :func:`seed` to make them reproducible.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import random

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS: list[str] | None = None
_rng: random.Random | None = None
_last_ms = -1
_last_rand = 0
_SEEDED_BASE_MS = 1_790_000_000_000  # 2026-09-21, an arbitrary fixed instant


def seed(value: int | None) -> None:
    """Make ids deterministic (``None`` goes back to OS randomness)."""
    global _rng, _last_ms, _last_rand
    if value is None:
        _rng = None
    else:
        import random  # only tests and the demo generator seed ids

        _rng = random.Random(value)
    _last_ms, _last_rand = -1, 0


def _random_bits(bits: int) -> int:
    if _rng is not None:
        return _rng.getrandbits(bits)
    return int.from_bytes(os.urandom(bits // 8), "big")


def encode(number: int, length: int) -> str:
    """``number`` in ``length`` Crockford base-32 characters (the low bits)."""
    # Two characters (ten bits) a step: a bulk recording makes millions of ids.
    pairs = _pairs()
    chars = []
    if length % 2:
        chars.append(_CROCKFORD[number & 31])
        number >>= 5
    for _ in range(length // 2):
        chars.append(pairs[number & 1023])
        number >>= 10
    chars.reverse()
    return "".join(chars)


#: Crockford's digits as the ones ``int(text, 32)`` reads (:func:`decode`), and every
#: other ASCII character as one it refuses (it would read *U* as 30, and take a sign,
#: spaces or underscores).
_AS_INT = {
    code: "0123456789abcdefghijklmnopqrstuv"[_CROCKFORD.index(chr(code))]
    if chr(code) in _CROCKFORD
    else "!"
    for code in range(128)
}


def decode(text: str) -> int:
    """The number ``text`` holds in Crockford base-32 characters (what :func:`encode`
    wrote); ValueError when a character is not one of them."""
    if not text.isascii():
        raise ValueError(f"not Crockford base-32: {text!r}")
    return int(text.translate(_AS_INT), 32)


def _pairs() -> list[str]:
    global _PAIRS
    if _PAIRS is None:
        _PAIRS = [high + low for high in _CROCKFORD for low in _CROCKFORD]
    return _PAIRS


def new_id(prefix: str, *, millis: int | None = None) -> str:
    """A new id such as ``les_01JD3Q...``; monotonic within one process."""
    global _last_ms, _last_rand, _time_part
    if millis is None:
        # Seeded (tests, the demo generator): a fixed time base, so ids repeat exactly.
        millis = _SEEDED_BASE_MS if _rng is not None else int(time.time() * 1000)
    ms = millis
    if ms <= _last_ms:
        # Same millisecond (or a fixed clock): keep ids increasing in this process.
        ms = _last_ms
        _last_rand += 1
    else:
        _last_ms, _last_rand = ms, _random_bits(80)
    if _time_part[0] != ms:  # ids made in one millisecond share it: encoded once
        _time_part = (ms, encode(ms, 10))
    return f"{prefix}_{_time_part[1]}{encode(_last_rand & ((1 << 80) - 1), 16)}"


#: The last millisecond an id was made in, encoded.
_time_part: tuple[int, str] = (-1, "")


def new_uuid() -> str:
    """A uuid4 string (checkpoints use full uuid4 ids, as the spec asks)."""
    import uuid  # not at the top: it pulls in `platform`, a cost on every CLI start

    if _rng is not None:
        return str(uuid.UUID(int=_rng.getrandbits(128), version=4))
    return str(uuid.uuid4())
