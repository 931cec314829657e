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
from ..core.storage.rebase import copy_shifted, offset_to
from ..core.storage.store import Store


def open_store(path: str | Path) -> Store:
    """Open (or create) the store at ``path`` for the workbench."""
    return Store(path)


def demo_copy() -> Path:
    """A fresh temporary copy of data/demo (the committed demo is never changed), its
    timestamps moved so that it reads as written just now.

    The demo was written at a fixed instant (its ``meta`` record ``demo`` names it).
    Moving the copy's instants, rather than the workbench's clock, keeps one clock for
    the workbench and for an agent writing to the copy meanwhile (``MEMWORK_DB``).
    """
    source = demo_source()
    if not (source / "store.json").exists():
        raise SystemExit(f"memwork: the demo store is missing at {source}; run `make demo`")
    folder = Path(tempfile.mkdtemp(prefix="memwork-demo-"))
    target = folder / "demo"
    # Read from a plain copy: opening the committed folder could leave a lock file in it.
    raw = folder / "as-written"
    shutil.copytree(source, raw, ignore=shutil.ignore_patterns(".lock"))
    try:
        store = Store(raw, create=False)
        try:
            with store.reading():
                written_at = (store.get("meta", "demo") or {}).get("now")
        finally:
            store.close()
        if written_at:
            copy_shifted(raw, target, offset_to(written_at, clock.now()))
            return target
        raw.rename(target)
        return target
    finally:
        shutil.rmtree(raw, ignore_errors=True)


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
        app = make_app(Store(path), title_suffix="demo copy", show_location=True)
        app.start_note = (
            "A temporary copy, deleted when you quit. To watch an agent write to it, "
            f"run it with MEMWORK_DB={path} (? shows this again)"
        )
        app.run()
        return app.return_code or 0
    finally:
        # Temporary means temporary: the copy and whatever the session wrote go away.
        shutil.rmtree(path.parent, ignore_errors=True)
