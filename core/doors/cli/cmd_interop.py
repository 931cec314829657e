"""``memwork export`` and ``memwork import``."""

from __future__ import annotations

import sys
from pathlib import Path

from ...storage.codec import dumps
from .main import Context
from .output import note


def export(ctx: Context) -> int:
    from ...services.interop.export import export_store

    target = Path(ctx.args.file) if ctx.args.file is not None else None
    if target is not None:
        if not ctx.args.file.strip():
            from ...base.errors import InvalidInput

            raise InvalidInput("FILE", "must name a file (got an empty path)")
        from ...storage.atomic import check_user_file

        check_user_file(target)  # before the store is read: a bad FILE costs nothing
    from ...privacy.controls import escape_json_output

    document = escape_json_output(dumps(export_store(ctx.store, now=ctx.now)))
    if target is not None:
        from ...storage.atomic import write_user_file

        write_user_file(target, document)
        note(f"exported to {target}")
    else:
        sys.stdout.buffer.write(document)
    return 0


def import_(ctx: Context) -> int:
    """``memwork import FILE [--format F] [--on-conflict P]``."""
    from ...services.interop.importer import run_import
    from .output import emit_json, say

    def progress(done: int, total: int) -> None:
        if total >= 2000:
            end = "\n" if done >= total else "\r"
            print(f"importing: {done}/{total} records", end=end, file=sys.stderr, flush=True)

    ctx.hold_index()  # an import that replaces records takes their old text out
    report = run_import(
        ctx.store,
        Path(ctx.args.file),
        fmt=ctx.args.format,
        on_conflict=ctx.args.on_conflict,
        now=ctx.now,
        actor=ctx.actor,
        progress=progress,
        curator=ctx.curator,
    )
    if report.clashes:
        note(
            f"{len(report.clashes)} clashes with existing records: "
            f"{ctx.args.on_conflict} (skipped {sum(report.skipped.values())}, replaced "
            f"{sum(report.replaced.values())}, kept both {sum(report.kept_both.values())})"
        )
    if ctx.json:
        emit_json(report.to_json())
        return 0
    say(f"imported {ctx.args.file} ({report.format})")
    for table in sorted(set(report.added) | set(report.replaced) | set(report.kept_both)):
        say(
            f"  {table}: {report.added.get(table, 0)} added"
            + (f", {report.replaced[table]} replaced" if table in report.replaced else "")
            + (f", {report.kept_both[table]} kept both" if table in report.kept_both else "")
        )
    for table, n in sorted(report.skipped.items()):
        say(f"  {table}: {n} skipped (already there)")
    if report.note:
        say(f"  note: {', '.join(f'{k}' for k in report.note)} kept with the import")
    if report.settings_not_imported:
        carried = ", ".join(f"{k} {v}" for k, v in sorted(report.settings_not_imported.items()))
        say(f"  store settings not imported (the file has {carried}); this store keeps its own")
    return 0
