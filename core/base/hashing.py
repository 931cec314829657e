"""SHA-1 without OpenSSL: digests that name records and buckets, never for secrecy.

CPython's own ``_sha1`` is used where it exists: importing :mod:`hashlib` loads
OpenSSL (~2 ms), which every recorded episode would pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # _sha1 has no stubs; it has hashlib's sha1 interface
    from hashlib import sha1 as sha1
else:
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import sha1

__all__ = ["sha1"]
