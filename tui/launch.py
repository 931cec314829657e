"""Open the workbench from the CLI: `memwork [--db P]` or `memwork --demo`."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..core.base import clock

# The workbench writes through the operations' runner, which registers the schema steps
# and what recall's files hold before any store is opened.
from ..core.ops import runner as _runner  # noqa: F401
from ..core.storage.paths import demo_source
from ..core.storage.store import Store


def open_store(path: str | Path) -> Store:
    """Open (or create) the store at ``path`` for the workbench."""
    return Store(path)


def demo_copy() -> Path:
    """A fresh temporary copy of data/demo (the committed demo is never changed)."""
    source = demo_source()
    if not (source / "store.json").exists():
        raise SystemExit(f"memwork: the demo store is missing at {source}; run `make demo`")
    target = Path(tempfile.mkdtemp(prefix="memwork-demo-")) / "demo"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def launch(path: Path | str | None, *, demo: bool = False) -> int:
    """Run the workbench on a folder or a Redis URL; returns the exit code (129 when its
    terminal hung up)."""
    from .app import make_app

    if not demo:
        assert path is not None
        app = make_app(path)
        app.run()
        return app.return_code or 0
    path = demo_copy()
    try:
        store = Store(path)
        with store.reading():
            marker = store.get("meta", "demo") or {}
        if marker.get("now"):
            # The demo was written at a fixed instant: start the clock there so its
            # lessons look their intended age, then let it run (TTLs count down).
            clock.shift(clock.parse_instant(marker["now"]))
        app = make_app(store, title_suffix="demo (a temporary copy)")
        app.run()
        return app.return_code or 0
    finally:
        # Temporary means temporary: the copy and whatever the session wrote go away.
        shutil.rmtree(path.parent, ignore_errors=True)
