"""``memwork``: the headless CLI agents call on every step, and the workbench launcher.

The parser is made from the operations' declarations (:mod:`core.ops.operations`,
:mod:`core.doors.cli.parser`), and only for the verb a call names. A command runs its
operation's core function through :mod:`core.ops.runner`, as every other door does,
and prints the result with the printer the operation names (a function in a
``cmd_<group>`` module, imported only when it runs); the workbench (textual) is
imported only when no verb is given, so a cold ``memwork context`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ...base.errors import Conflict, MemworkError, UserError, worded
from ...ops.operations import Op, by_name
from .parser import build, quoted_short, verbs

if TYPE_CHECKING:  # only for annotations: a verb loads what it uses when it runs
    from datetime import datetime
    from pathlib import Path

    from ...ledger.curator import Curator
    from ...storage.store import Store


class Context:
    """What a command needs: its arguments, the store, the clock, the actor."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        #: The recall index file held open across a write (:meth:`Context.hold_index`).
        self.held_index: int | None = None

    def hold_index(self) -> None:
        """Before a write to the store: hold its recall index file open, so that should
        the write's commit remove it (it took text out of the store), the index can be
        saved again from it after the answer (:func:`_save_again`) rather than built
        again by the next search. Only the CLI's own process (its exit lets go)."""
        if not _OWN_PROCESS or self.held_index is not None:
            return
        from ...services.recall.save_apart import hold

        self.held_index = hold(self.store)

    @cached_property
    def op(self) -> Op:
        """The operation the command runs."""
        return by_name(self.args.op)

    @property
    def reads_only(self) -> bool:
        """Whether the command only reads (so it must not create a store): a verb that
        only reads never creates a store at a mistyped path."""
        op = self.op
        if op.read_unless:
            return all(getattr(self.args, name, None) is None for name in op.read_unless)
        return not op.writes

    @cached_property
    def store_path(self) -> Path | str:
        from ...storage.paths import resolve_store_path

        return resolve_store_path(self.args.db)

    @cached_property
    def store(self) -> Store:
        from ...domain import migrations  # noqa: F401 - an older store's upgrade steps
        from ...storage.paths import store_location
        from ...storage.store import Store

        # A restore is the repair of a damaged store: it may open one whose store.json
        # cannot be read (core/storage/manifest_rescue.py).
        rescue = self.args.op == "restore_checkpoint"
        store = Store(store_location(self.args.db), create=not self.reads_only, rescue=rescue)
        store.one_call = True  # recall saves its index after the answer, not in a thread
        store.fold_mode = "close"  # and the log is folded then too, never inside the commit
        return store

    @cached_property
    def now(self) -> datetime:
        from ...base.clock import now

        return now()

    @property
    def actor(self) -> str:
        agent = os.environ.get("MEMWORK_AGENT")
        if agent:
            from ...base.errors import InvalidInput
            from ...privacy import identifier_problem

            problem = identifier_problem(agent)
            if problem:
                raise InvalidInput("MEMWORK_AGENT", problem)
        return f"cli:{agent}" if agent else "cli"

    @cached_property
    def curator(self) -> Curator | None:
        """The curator key given with ``--curator-key FILE`` (never from the environment
        or the default file: an agent started from the same shell would inherit those)."""
        path = getattr(self.args, "curator_key", None)
        if not path:
            return None
        from ...ledger.curator import load

        return load(path)

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def params(self) -> dict[str, Any]:
        """The operation's parameters, as the CLI was given them."""
        return {p.name: getattr(self.args, p.name) for p in self.op.params if "cli" in p.doors}


#: What a parameter spelled so names: a path, which may be any bytes the system allows.
_PATH_WORDS = frozenset({"FILE", "SRC", "DST", "PATH"})


def _refuse_undecoded(ctx: Context) -> None:
    """Refuse an argument whose bytes are not UTF-8 (Python reads each such byte as an
    unpaired surrogate, which no store can hold), naming the parameter, before the
    store is opened. A path may be any bytes: those are left to the file system."""
    for p in ctx.op.params:
        if "cli" not in p.doors or {p.cli, p.metavar} & _PATH_WORDS:
            continue
        value = getattr(ctx.args, p.name, None)
        if not _plainly_fine(value):
            # Imported only now: ``memwork context`` runs on every agent step.
            from ...models.limits import check_plain

            check_plain(value, p.name)


def _plainly_fine(value: object) -> bool:
    """Whether ``value`` is an argument no store could refuse, seen at a glance (ASCII
    text, a whole or finite number, a list of such text); the rest is checked whole."""
    if value is None or isinstance(value, bool | int):
        return True
    if isinstance(value, str):
        return value.isascii()
    if isinstance(value, float):
        return value - value == 0.0  # false for NaN and the infinities
    if isinstance(value, list):
        return all(isinstance(v, str) and v.isascii() for v in value)
    return False


def _refuse_past_bounds(ctx: Context) -> None:
    """Refuse a whole number past the bounds every door keeps to (±2**53), naming its
    parameter, before the store is opened. For a verb that runs itself (``context``
    …): the others' parameters are checked as every door's are, and this one's would
    reach its output's encoder (a budget of 23 digits ended there in an internal
    error)."""
    for p in ctx.op.params:
        value = getattr(ctx.args, p.name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 53:
            from ...models.limits import check_int

            check_int(value, p.name)


def run_op(ctx: Context) -> int:
    """Run the command's operation and print its result (``--json``: as JSON)."""
    op = ctx.op
    _refuse_undecoded(ctx)
    if op.cli_run:
        from ...ledger.isolation import asking

        _refuse_past_bounds(ctx)

        # A verb that runs itself (context, export…) reads as this caller too.
        with asking(ctx.actor, ctx.curator):
            return int(_resolve(op.cli_run)(ctx) or 0)
    from ...ops.runner import call, check_rules

    params = ctx.params()
    for param in op.params:  # a group's flag (``wm --session``) is optional for some verbs
        if params.get(param.name, ...) is None and param.default is ... and param.cli:
            if not param.type.endswith("?"):
                from ...base.errors import InvalidInput

                raise InvalidInput(param.name, f"is required ({param.cli} {param.metavar})")
    check_rules(op, params)  # bad input is refused before the store is opened
    if op.writes:
        ctx.hold_index()
    result = call(op, ctx.store, params, now=ctx.now, actor=ctx.actor, curator=ctx.curator)
    if op.review and isinstance(result, dict) and result.get("proposed") is True:
        return int(_resolve("cmd_review:proposed")(ctx, result) or 0)
    if op.cli_print:
        return int(_resolve(op.cli_print)(ctx, result) or 0)
    from .output import emit_json, say

    if ctx.json:
        emit_json(result)
    else:
        say(result["id"])
    return 0


def _verb(argv: list[str]) -> str | None:
    """The command word, skipping global options (``--db`` takes a value)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("--db", "--curator-key"):
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _resolve(handler: str) -> Callable[..., int | None]:
    module, _, name = handler.partition(":")
    # Handlers and printers name their module inside this package: the package itself
    # is ``memwork.core.doors.cli`` once installed.
    fn: Callable[..., int | None] = getattr(
        importlib.import_module(f"{__package__}.{module}"), name
    )
    return fn


def _open_workbench(args: argparse.Namespace) -> int:
    from ...storage.paths import resolve_store_path

    drawn_elsewhere = bool(os.environ.get("TEXTUAL_DRIVER"))  # the browser viewer's child
    if not drawn_elsewhere and not (_terminal(sys.stdin) and _terminal(sys.stdout)):
        # Drawn into a pipe or a file, the workbench would wait for keys that never
        # come: a script or an agent that left out its command would hang, and its
        # output fill with escape codes. Refused before any store is opened or made.
        raise Conflict(
            "the workbench needs a terminal, and this memwork's input or output is not one; "
            "a script or an agent names a command (`memwork context`; `memwork --help` "
            "lists them)"
        )
    path = None if args.demo else resolve_store_path(args.db)
    # textual is imported only here. By name, not by an import statement: the
    # workbench is a sibling package (``memwork.tui``) that core never depends on.
    launch = importlib.import_module("memwork.tui.launch").launch
    code: int = launch(path, demo=args.demo)
    return code


def _terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal (a replaced or closed stream is not)."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 user error, 1 anything else)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    verb = _verb(args_list)
    parser = build(verb if verb in verbs() else None)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # usage errors and --help: report the code, do not raise
        return int(exc.code or 0)
    try:
        if args.version:
            from ... import __version__

            print(f"memwork {__version__}")
            return 0
        if not args.command:
            return _open_workbench(args)
        from ...privacy import counting

        ctx = Context(args)
        code = 1
        try:
            with counting() as tally:
                code = run_op(ctx)
        finally:
            opened = ctx.__dict__.get("store")  # the cached store, when the verb opened one
            if opened is not None:
                if code == 0:
                    _settle(opened)
                    _save_again(opened, ctx)
                    opened.close()
                else:  # refused: a store this call created for it is taken back
                    if ctx.held_index is not None:
                        os.close(ctx.held_index)
                    opened.discard_if_new()
                if not _OWN_PROCESS:  # (the CLI's own process lets its exit do it)
                    _release(opened)
        if tally.total and not tally.reported:
            # Every redaction is reported: JSON objects carry them in a field
            # (core.doors.cli.output.emit_json); anything else gets this line on stderr.
            print(f"memwork: {tally.describe()}", file=sys.stderr)
        return code
    except UserError as exc:
        print(_shown(exc), file=sys.stderr)
        return 2
    except MemworkError as exc:
        print(_shown(exc), file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the contract is one line, never a traceback
        if os.environ.get("MEMWORK_DEBUG"):
            raise
        print(_safe(f"memwork: internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1


#: Whether this process is the CLI's own (``entry``): a save owed after the answer is
#: then left to a child the call does not wait for. Not when ``main`` runs inside
#: another program (a test), whose process must not be forked.
_OWN_PROCESS = False


def _settle(store: Store) -> None:
    """What the call owes the next one, once its answer is out: the recall index it
    built or found far behind is saved (never inside the search itself)."""
    search = sys.modules.get(f"{__package__.rsplit('.doors', 1)[0]}.services.recall.search")
    if search is None:  # the verb never searched
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        search.settle(store, apart=_OWN_PROCESS)
    except Exception:  # noqa: BLE001, S110 - a cache: the answer was given, the next call rebuilds
        pass


def _save_again(store: Store, ctx: Context) -> None:
    """After a write held the recall index file (:meth:`Context.hold_index`): if its commit
    removed the file, a child saves it again, caught up (see
    :func:`core.services.recall.save_apart.save_again_apart`)."""
    held, ctx.held_index = ctx.held_index, None
    if held is None:
        return
    from ...services.recall.save_apart import save_again_apart

    sys.stdout.flush()
    sys.stderr.flush()
    try:
        save_again_apart(store, held)
    except Exception:  # noqa: BLE001, S110 - a cache: the answer was given, the next search builds
        pass


def _release(store: Store) -> None:
    """Let go of the recall index a search kept for ``store`` (its file's mapping): a
    program that runs many calls in one process keeps no file of each open."""
    search = sys.modules.get(f"{__package__.rsplit('.doors', 1)[0]}.services.recall.search")
    if search is not None:
        search.release(store)


def _shown(exc: Exception) -> str:
    """An error's ``memwork: …`` line, made safe for a terminal: it may quote what the
    user gave."""
    return _safe(worded(exc))


def _safe(line: str) -> str:
    """An error line as every error is printed: the long arguments it quotes cut short,
    no control characters."""
    from ...privacy.controls import terminal_text

    return terminal_text(quoted_short(line))


def entry() -> None:
    """Console-script entry point."""
    global _OWN_PROCESS
    _OWN_PROCESS = True
    sys.exit(main())


if __name__ == "__main__":
    entry()
