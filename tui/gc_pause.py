"""Keep the garbage collector's full passes away from big loads.

Loading 100k episodes and indexing every record for search creates hundreds
of thousands of long-lived objects. CPython's full collection walks every
tracked object, and it runs several times while such a load grows the heap:
each pass stopped the whole app for 0.6–0.9 s at 100k episodes, and a key
pressed then waited for it (a pane switch measured ~1 s instead of ~40 ms).

During a big load the cyclic collector is paused (reference counting still
frees everything without cycles, which is nearly all a load makes); when the
last load ends, what is alive is moved to the permanent generation
(``gc.freeze``) so later collections skip it, and collection resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_loads = 0
_was_enabled = True


@contextmanager
def big_load() -> Iterator[None]:
    """Pause cyclic garbage collection while the block runs (nesting and threads allowed)."""
    global _loads, _was_enabled
    with _lock:
        if _loads == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _loads += 1
    try:
        yield
    finally:
        with _lock:
            _loads -= 1
            if _loads == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()
