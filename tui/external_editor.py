"""``E``: edit the selected record's text in the user's own editor (``$VISUAL`` /
``$EDITOR``), then save it back through the same operation, and the same checks, as
``memwork lesson edit`` / ``memwork slot set``.

The workbench steps aside while the editor runs (Textual's ``App.suspend``) and
comes back when it exits. The text goes to the editor in a temporary file; what
comes back is saved only when it changed. A refused save (an empty lesson, a slot
over its limit, a read-only slot) changes nothing, and the file is kept and named
in the message, so what was typed is never lost.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported

if TYPE_CHECKING:
    from .app import MemworkApp

#: What the key says in the help.
TOOLTIP = "Edit its text in your own editor ($VISUAL, $EDITOR); saved when you quit it"
#: Used when neither $VISUAL nor $EDITOR is set (present on every Unix).
FALLBACK_EDITOR = "vi"


def editor_command() -> list[str]:
    """The user's editor as a command line ($VISUAL, then $EDITOR, then vi)."""
    chosen = os.environ.get("VISUAL") or os.environ.get("EDITOR") or FALLBACK_EDITOR
    return shlex.split(chosen)


def run_editor(app: MemworkApp, path: Path) -> str | None:
    """Open ``path`` in the editor with the workbench suspended; None when it could not
    start or exited with an error (the user gave up: nothing is saved)."""
    command = [*editor_command(), str(path)]
    try:
        with app.suspend():
            done = subprocess.run(command, check=False)
    except SuspendNotSupported:
        # No terminal to hand over (a test's headless app): run it as it is.
        done = subprocess.run(command, check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        app.notify(
            f"Could not start the editor {command[0]!r}: set $EDITOR",
            title="Not changed",
            severity="error",
            timeout=8,
        )
        return None
    if done.returncode != 0:
        app.notify(
            f"The editor exited with status {done.returncode}: nothing saved "
            f"(your text stays in {path})",
            title="Not changed",
            severity="warning",
            timeout=10,
        )
        return None
    return path.read_text(encoding="utf-8")


async def edit_and_save(
    app: MemworkApp, what: str, text: str, save: Any, *, suffix: str = ".md"
) -> bool:
    """Edit ``text`` (the record called ``what``) in the editor; when it came back
    changed, ``await save(new_text)`` (a write through the app, None when refused).
    Returns whether something was saved."""
    handle, name = tempfile.mkstemp(prefix="memwork-edit-", suffix=suffix)
    path = Path(name)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text if text.endswith("\n") else text + "\n")
    edited = run_editor(app, path)
    if edited is None:
        return False
    # Editors add a final newline; the stored text never ends with one.
    new_text = edited.rstrip("\n")
    if new_text == text.rstrip("\n"):
        path.unlink(missing_ok=True)
        app.notify(f"{what}: no changes", timeout=3)
        return False
    saved = await save(new_text)
    if saved is None:
        app.notify(
            f"Your text for {what} is kept in {path}",
            title="Not saved",
            severity="warning",
            timeout=15,
        )
        return False
    path.unlink(missing_ok=True)
    return True
