"""``memwork export`` and ``memwork import``."""

from __future__ import annotations

import sys
from pathlib import Path

from ..storage.codec import dumps
from .main import Context
from .output import note


def export(ctx: Context) -> int:
    from ..interop.export import export_store

    target = Path(ctx.args.file) if ctx.args.file is not None else None
    if target is not None:
        if not ctx.args.file.strip():
            from ..errors import InvalidInput

            raise InvalidInput("FILE", "must name a file (got an empty path)")
        from ..storage.atomic import check_user_file

        check_user_file(target)  # before the store is read: a bad FILE costs nothing
    from ..privacy.controls import escape_json_output

    document = escape_json_output(dumps(export_store(ctx.store, now=ctx.now)))
    if target is not None:
        from ..storage.atomic import write_user_file

        write_user_file(target, document)
        note(f"exported to {target}")
    else:
        sys.stdout.buffer.write(document)
    return 0


def import_(ctx: Context) -> int:
    from ..interop.importer import run_import_cli

    return run_import_cli(ctx)
