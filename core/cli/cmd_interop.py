"""``memwork export`` and ``memwork import``."""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.main import Context
from core.cli.output import note
from core.storage.codec import dumps


def export(ctx: Context) -> int:
    from core.interop.export import export_store

    document = dumps(export_store(ctx.store, now=ctx.now))
    if ctx.args.file:
        from core.storage.atomic import atomic_write

        target = Path(ctx.args.file)
        atomic_write(target, document, "export")
        note(f"exported to {target}")
    else:
        sys.stdout.buffer.write(document)
    return 0


def import_(ctx: Context) -> int:
    from core.interop.importer import run_import_cli

    return run_import_cli(ctx)
