"""``memwork``: the headless CLI agents call on every step, and the workbench launcher.

The parser knows every verb; a verb's module is imported only when it runs,
and the workbench (textual) only when no verb is given, so a cold
``memwork context`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import MemworkError, UserError

if TYPE_CHECKING:  # only for annotations: a verb loads what it uses when it runs
    from datetime import datetime
    from pathlib import Path

    from ..storage.store import Store


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"memwork: {message} (see `{self.prog} --help`)\n")


if TYPE_CHECKING:
    #: What ``add_subparsers(parser_class=_Parser)`` returns; each verb adds its parser to it.
    SubParsers = argparse._SubParsersAction[_Parser]


#: Verbs that only read: they never create a store at a mistyped path (a missing
#: store is "no memwork store at …", exit 2; ``context`` prints nothing). A new
#: read-only verb adds its handler here; every other verb creates the store.
READ_VERBS = frozenset(
    {
        "cmd_context:run",
        "cmd_sessions:list_",
        "cmd_sessions:show",
        "cmd_lessons:list_",
        "cmd_lessons:show",
        "cmd_rules:list_",
        "cmd_slots:show",
        "cmd_slots:list_",
        "cmd_wm:get",
        "cmd_wm:list_",
        "cmd_wm:scratch_list",
        "cmd_wm:cp_list",
        "cmd_checkpoints:list_",
        "cmd_checkpoints:diff",
        "cmd_interop:export",
        "cmd_stats:stats",
        "cmd_stats:doctor",
        "cmd_config:get",
        "cmd_config:list_",
        "cmd_review:list_",
        "cmd_review:show",
        "cmd_lint:run",
        "cmd_search:run",
        "cmd_history:run",
    }
)
_WM_TASK_CHANGES = ("task_id", "description", "status", "step", "total", "progress")


class Context:
    """What a command needs: its arguments, the store, the clock, the actor."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    @property
    def reads_only(self) -> bool:
        """Whether the command only reads (so it must not create a store)."""
        handler = getattr(self.args, "handler", "")
        if handler == "cmd_wm:task":
            return all(getattr(self.args, f, None) is None for f in _WM_TASK_CHANGES)
        return handler in READ_VERBS

    @cached_property
    def store_path(self) -> Path | str:
        from ..paths import resolve_store_path

        return resolve_store_path(self.args.db)

    @cached_property
    def store(self) -> Store:
        from ..storage.store import Store

        return Store(self.store_path, create=not self.reads_only)

    @cached_property
    def now(self) -> datetime:
        from ..clock import now

        return now()

    @property
    def actor(self) -> str:
        agent = os.environ.get("MEMWORK_AGENT")
        return f"cli:{agent}" if agent else "cli"

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def _cmd(
    sub: SubParsers, name: str, handler: str, help_text: str, **kw: Any
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=help_text, description=help_text, **kw)
    parser.set_defaults(handler=handler)
    _json_flag(parser)
    return parser


def _global_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db",
        metavar="PATH",
        help="store folder or redis://[:password@]host:port/N URL "
        "(default: $MEMWORK_DB, else the user data dir)",
    )
    p.add_argument(
        "--demo", action="store_true", help="open the workbench on a fresh copy of the demo store"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--version", action="store_true", help="print the version and exit")


def _add_context(sub: SubParsers) -> None:
    c = _cmd(sub, "context", "cmd_context:run", "print the prompt context")
    c.add_argument("--task", metavar="T")
    c.add_argument(
        "--project", metavar="P", help="rank this project's lessons (scope project:P) as matching"
    )
    c.add_argument(
        "--budget", type=int, default=2000, metavar="N", help="token budget (default 2000)"
    )
    c.add_argument("--format", choices=["text", "json"], default="text")
    c.add_argument("--style", choices=["default", "episodic"], default="default")
    c.add_argument(
        "--query",
        metavar="TEXT",
        help="add the memories most relevant to TEXT (observations, episodes, lessons)",
    )


def _add_record(sub: SubParsers) -> None:
    c = _cmd(
        sub,
        "record-episode",
        "cmd_episodes:record",
        "record episodes (JSON, array or JSON Lines)",
    )
    c.add_argument("file", nargs="?", default="-", metavar="FILE|-")


def _add_search(sub: SubParsers) -> None:
    c = _cmd(sub, "search", "cmd_search:run", "search every kind of memory")
    c.add_argument("query", metavar="QUERY")
    c.add_argument(
        "--kind",
        action="append",
        default=[],
        metavar="K",
        help="lesson, rule, card, episode, observation, slot, wm, session, checkpoint (repeatable)",
    )
    c.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10)")
    c.add_argument(
        "--since",
        metavar="WHEN",
        help="recorded at or after WHEN (ISO instant or date, or 7d, 12h)",
    )
    c.add_argument(
        "--until", metavar="WHEN", help="recorded at or before WHEN (ISO instant or date, or 7d)"
    )
    c.add_argument("--session", metavar="S", help="only what belongs to session S")


#: Verbs agents run on every step, each with a parser of its own.
_STEP_VERBS = {"context": _add_context, "record-episode": _add_record, "search": _add_search}


def step_parser(verb: str) -> argparse.ArgumentParser:
    """Only one of the verbs agents call on every step (``context``, ``record-episode``,
    ``search``).

    Building the whole parser (~60 sub-parsers) would cost ~18 ms of each call.
    """
    p = _Parser(prog="memwork", description="A memory workbench for AI agents.")
    _global_options(p)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _STEP_VERBS[verb](sub)
    return p


def context_parser() -> argparse.ArgumentParser:
    """Only the ``context`` verb (see :func:`step_parser`)."""
    return step_parser("context")


def build_parser() -> argparse.ArgumentParser:
    """The whole CLI contract (README, CLI reference)."""
    p = _Parser(prog="memwork", description="A memory workbench for AI agents.")
    _global_options(p)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_context(sub)
    _add_record(sub)

    c = _cmd(sub, "observe", "cmd_sessions:observe", "add an observation to a session")
    c.add_argument("--session", required=True, metavar="S")
    c.add_argument("--kind", default="note", metavar="K")
    c.add_argument("--tag", action="append", default=[], metavar="T")
    c.add_argument("text", metavar="TEXT")

    s = _cmd(sub, "session", "", "start, end and list sessions")
    ss = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(ss, "start", "cmd_sessions:start", "start a session (prints its id)")
    c.add_argument("--agent", default="", metavar="A")
    c.add_argument("--project", default="", metavar="P")
    c.add_argument("--title", default="", metavar="T")
    c = _cmd(ss, "end", "cmd_sessions:end", "end a session")
    c.add_argument("id", metavar="ID")
    c.add_argument("--summary", default="", metavar="S")
    _cmd(ss, "list", "cmd_sessions:list_", "list sessions")
    c = _cmd(ss, "show", "cmd_sessions:show", "show a session and its observations")
    c.add_argument("id", metavar="ID")

    s = _cmd(sub, "lesson", "", "lessons with decaying confidence")
    ls = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(ls, "add", "cmd_lessons:add", "add a lesson (re-adding reinforces)")
    c.add_argument("text", metavar="TEXT")
    c.add_argument("--scope", default="global", metavar="S")
    c.add_argument("--confidence", type=float, metavar="C")
    c.add_argument("--tag", action="append", default=[], metavar="T")
    c.add_argument(
        "--on-duplicate", choices=["reinforce", "supersede", "keep-both"], default="reinforce"
    )
    c = _cmd(ls, "list", "cmd_lessons:list_", "list lessons")
    c.add_argument("--all", action="store_true", help="include forgotten, deleted and superseded")
    for verb in ("show", "reinforce", "weaken", "pin", "unpin", "forget", "restore"):
        c = _cmd(ls, verb, f"cmd_lessons:{verb}", f"{verb} a lesson")
        c.add_argument("id", metavar="ID")

    s = _cmd(sub, "rule", "", "rules for a task or for every task")
    rs = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(rs, "add", "cmd_rules:add", "add a manual rule")
    c.add_argument("text", metavar="TEXT")
    c.add_argument("--scope", default="global", metavar="S")
    c = _cmd(rs, "list", "cmd_rules:list_", "list active rules")
    c.add_argument("--all", action="store_true", help="include inactive rules")
    c.add_argument("--scope", metavar="S")

    s = _cmd(sub, "slot", "", "pinned slots that lead the context")
    sl = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(sl, "set", "cmd_slots:set_", "create or overwrite a slot")
    c.add_argument("label", metavar="LABEL")
    c.add_argument("text", metavar="TEXT")
    c.add_argument("--limit", type=int, metavar="N")
    c.add_argument("--description", metavar="D")
    c = _cmd(sl, "append", "cmd_slots:append", "append text to a slot")
    c.add_argument("label", metavar="LABEL")
    c.add_argument("text", metavar="TEXT")
    c = _cmd(sl, "replace", "cmd_slots:replace", "replace OLD with NEW in a slot")
    c.add_argument("label", metavar="LABEL")
    c.add_argument("old", metavar="OLD")
    c.add_argument("new", metavar="NEW")
    for verb in ("show", "delete"):
        c = _cmd(sl, verb, f"cmd_slots:{verb}", f"{verb} a slot")
        c.add_argument("label", metavar="LABEL")
    _cmd(sl, "list", "cmd_slots:list_", "list slots")

    s = _cmd(sub, "wm", "", "a session's working memory")
    s.add_argument("--session", required=True, metavar="S")
    ws = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(ws, "set", "cmd_wm:set_", "set a key")
    c.add_argument("key", metavar="KEY")
    c.add_argument("value", metavar="VALUE")
    c.add_argument("--ttl", type=float, metavar="SECONDS")
    for verb in ("get", "delete"):
        c = _cmd(ws, verb, f"cmd_wm:{verb}", f"{verb} a key")
        c.add_argument("key", metavar="KEY")
    _cmd(ws, "list", "cmd_wm:list_", "list live keys")
    c = _cmd(ws, "task", "cmd_wm:task", "show or update the task state")
    c.add_argument("--id", dest="task_id", metavar="T")
    c.add_argument("--description", metavar="D")
    c.add_argument("--step", type=int, metavar="N")
    c.add_argument("--total", type=int, metavar="N")
    c.add_argument("--progress", type=float, metavar="P")
    c.add_argument("--status", metavar="S")
    c = _cmd(ws, "scratch", "", "the session's scratchpad")
    sc = c.add_subparsers(
        dest="scratch_action", metavar="ACTION", parser_class=_Parser, required=True
    )
    c = _cmd(sc, "add", "cmd_wm:scratch_add", "append a scratchpad entry")
    c.add_argument("text", metavar="TEXT")
    _cmd(sc, "list", "cmd_wm:scratch_list", "list scratchpad entries")
    c = _cmd(ws, "checkpoint", "", "working-memory checkpoints")
    wc = c.add_subparsers(dest="cp_action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(wc, "create", "cmd_wm:cp_create", "snapshot the working memory")
    c.add_argument("-m", "--message", default="", metavar="DESC")
    _cmd(wc, "list", "cmd_wm:cp_list", "list checkpoints")
    for verb in ("restore", "delete"):
        c = _cmd(wc, verb, f"cmd_wm:cp_{verb}", f"{verb} a checkpoint")
        c.add_argument("id", metavar="ID")

    s = _cmd(sub, "checkpoint", "", "store-wide checkpoints")
    cs = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(cs, "create", "cmd_checkpoints:create", "snapshot the store (prints the id)")
    c.add_argument("-m", "--message", default="", metavar="DESC")
    _cmd(cs, "list", "cmd_checkpoints:list_", "list checkpoints")
    c = _cmd(cs, "diff", "cmd_checkpoints:diff", "what changed since a checkpoint")
    c.add_argument("id", metavar="ID")
    c.add_argument("id2", nargs="?", metavar="ID2")
    for verb in ("restore", "delete"):
        c = _cmd(cs, verb, f"cmd_checkpoints:{verb}", f"{verb} a checkpoint")
        c.add_argument("id", metavar="ID")

    _cmd(sub, "consolidate", "cmd_episodes:consolidate", "distil recent episodes into rules")

    c = _cmd(sub, "import", "cmd_interop:import_", "import a file (prints counts per table)")
    c.add_argument("file", metavar="FILE")
    c.add_argument(
        "--format", default="auto", choices=["auto", "memwork", "episodic", "letta", "agentmemory"]
    )
    c.add_argument("--on-conflict", default=None, choices=["skip", "replace", "keep-both"])
    c = _cmd(sub, "export", "cmd_interop:export", "the whole store as one JSON document")
    c.add_argument("file", nargs="?", metavar="FILE")

    _add_search(sub)

    c = _cmd(sub, "history", "cmd_history:run", "the audit log, newest first")
    c.add_argument("--table", metavar="T", help="entries about this table (lessons, episodes, ...)")
    c.add_argument("--record", metavar="ID", help="entries about this record (id, prefix or tail)")
    c.add_argument(
        "--actor", metavar="A", help="entries by this actor (cli also matches cli:<agent>)"
    )
    c.add_argument(
        "--limit", type=int, default=50, metavar="N", help="at most N entries (default 50)"
    )

    c = _cmd(sub, "mcp", "cmd_mcp:run", "serve the store to agents over MCP (stdio)")
    c.add_argument(
        "--agent", metavar="A", help="agent id for the audit log (default $MEMWORK_AGENT)"
    )

    c = _cmd(
        sub,
        "copy",
        "cmd_copy:run",
        "copy a whole store between backends (all or nothing, into a new store)",
    )
    c.add_argument("source", metavar="SRC", help="a store folder or redis:// URL")
    c.add_argument(
        "target", metavar="DST", help="a new or empty folder, or an empty Redis database"
    )

    _cmd(
        sub,
        "stats",
        "cmd_stats:stats",
        "counts, per-task scores, top mistake cards (JSON)",
    )
    _cmd(sub, "doctor", "cmd_stats:doctor", "check data, schema and locks; repairs nothing")
    _add_curation(sub)
    return p


def _add_curation(sub: Any) -> None:
    """``config``, ``review`` and ``lint``."""
    s = _cmd(sub, "config", "", "store settings (review on|off, context_log on|off)")
    cs = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(cs, "set", "cmd_config:set_", "set a store setting")
    c.add_argument("key", metavar="KEY")
    c.add_argument("value", metavar="VALUE")
    c = _cmd(cs, "get", "cmd_config:get", "print a setting's value")
    c.add_argument("key", metavar="KEY")
    _cmd(cs, "list", "cmd_config:list_", "every setting with its value")

    s = _cmd(sub, "review", "", "proposals from agents waiting for review")
    rs = s.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    c = _cmd(rs, "list", "cmd_review:list_", "pending proposals, oldest first")
    c.add_argument("--all", action="store_true", help="include decided proposals")
    c = _cmd(rs, "show", "cmd_review:show", "one proposal with its diff")
    c.add_argument("id", metavar="ID")
    c = _cmd(rs, "approve", "cmd_review:approve", "make a proposal live")
    c.add_argument("id", metavar="ID")
    c.add_argument("--edit", metavar="TEXT", help="approve with this text instead")
    c = _cmd(rs, "reject", "cmd_review:reject", "turn a proposal down")
    c.add_argument("id", metavar="ID")
    c.add_argument("--why", metavar="TEXT", help="the reason (kept with it)")
    c = _cmd(rs, "merge", "cmd_review:merge", "reinforce a lesson instead")
    c.add_argument("id", metavar="ID")
    c.add_argument("lesson_id", metavar="LESSON_ID")

    _cmd(sub, "lint", "cmd_lint:run", "findings a curator should look at (exit 0)")


def _verb(argv: list[str]) -> str | None:
    """The command word, skipping global options (``--db`` takes a value)."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--db":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _resolve(handler: str) -> Callable[[Context], int]:
    module, _, name = handler.partition(":")
    # Handlers name their module inside this package: the package itself is
    # ``memwork.core.cli`` once installed.
    fn: Callable[[Context], int] = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return fn


def _open_workbench(args: argparse.Namespace) -> int:
    from ..paths import resolve_store_path

    path = None if args.demo else resolve_store_path(args.db)
    # textual is imported only here. By name, not by an import statement: the
    # workbench is a sibling package (``memwork.tui``) that core never depends on.
    launch = importlib.import_module("...tui.launch", __package__).launch
    code: int = launch(path, demo=args.demo)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 2 user error, 1 anything else)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    verb = _verb(args_list)
    parser = step_parser(verb) if verb in _STEP_VERBS else build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # usage errors and --help: report the code, do not raise
        return int(exc.code or 0)
    try:
        if args.version:
            from .. import __version__

            print(f"memwork {__version__}")
            return 0
        if not args.command:
            return _open_workbench(args)
        from ..privacy import counting

        with counting() as tally:
            code = int(_resolve(args.handler)(Context(args)) or 0)
        if tally.total and not tally.reported:
            # Every redaction is reported: JSON objects carry them in a field
            # (core.cli.output.emit_json); anything else gets this line on stderr.
            print(f"memwork: {tally.describe()}", file=sys.stderr)
        return code
    except UserError as exc:
        print(f"memwork: {exc}", file=sys.stderr)
        return 2
    except MemworkError as exc:
        print(f"memwork: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - the contract is one line, never a traceback
        if os.environ.get("MEMWORK_DEBUG"):
            raise
        print(f"memwork: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
