"""SHA-1 and BLAKE2b without OpenSSL.

CPython's own ``_sha1`` and ``_blake2`` are used where they exist: importing
:mod:`hashlib` loads OpenSSL (~2 ms and ~3.4 MB), which every recorded episode and
every CLI search would pay, for digests it never uses. SHA-1 names records and
buckets, never for secrecy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # _sha1 and _blake2 have no stubs; they have hashlib's interfaces
    from hashlib import blake2b as blake2b
    from hashlib import sha1 as sha1
else:
    try:
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import sha1
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import blake2b

__all__ = ["blake2b", "sha1"]
