"""``memwork export`` and ``memwork import``."""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.main import Context
from core.cli.output import note
from core.storage.codec import dumps


def export(ctx: Context) -> int:
    from core.interop.export import export_store

    target = Path(ctx.args.file) if ctx.args.file is not None else None
    if target is not None:
        if not ctx.args.file.strip():
            from core.errors import InvalidInput

            raise InvalidInput("FILE", "must name a file (got an empty path)")
        from core.storage.atomic import check_user_file

        check_user_file(target)  # before the store is read: a bad FILE costs nothing
    document = dumps(export_store(ctx.store, now=ctx.now))
    if target is not None:
        from core.storage.atomic import write_user_file

        write_user_file(target, document)
        note(f"exported to {target}")
    else:
        sys.stdout.buffer.write(document)
    return 0


def import_(ctx: Context) -> int:
    from core.interop.importer import run_import_cli

    return run_import_cli(ctx)
