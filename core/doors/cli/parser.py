"""The CLI's parser, made from the operations' declarations (:mod:`core.ops.operations`).

Each operation with CLI words becomes a sub-command (``lesson add``), its
parameters arguments: a word in capitals is positional, anything else a flag.
A group (``wm``) gets its own flags (``--session``) and help. Only the verb a
call names is built (an agent's ``memwork context`` parses against one
sub-parser, not ~70); ``memwork --help`` or an unknown verb builds them all.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ...ops.operations import GROUPS, OPERATIONS, Op, Param, pointing_elsewhere

_TYPES: dict[str, Any] = {"int": int, "float": float}


def _width() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` reads it, without importing
    shutil (which brings bz2 and lzma: ~7 modules, several ms of every ``memwork
    context``)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return max(columns - 2, 11)


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, told the width (argparse makes one per argument it adds)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24) -> None:
        super().__init__(prog, indent_increment, max_help_position, width=_width())


#: How many characters of a value a usage error quotes (the rest is an ellipsis).
QUOTED = 80
#: The long arguments of the call being parsed (shortened wherever an error quotes them).
_long_args: list[str] = []


def _short(text: str) -> str:
    return text if len(text) <= QUOTED else text[: QUOTED - 1] + "…"


def quoted_short(message: str) -> str:
    """``message`` with every long argument of this call it quotes cut to :data:`QUOTED`
    characters and an ellipsis (a 6,000-character value made a 6,000-character line)."""
    for arg in sorted(_long_args, key=len, reverse=True):
        if arg in message or repr(arg) in message:
            message = message.replace(repr(arg), repr(_short(arg))).replace(arg, _short(arg))
    return message


def usage_line(message: str, prog: str) -> str:
    """argparse's ``message`` as the CLI's one error line, as every other error line is
    made: long arguments quoted short, no control characters (an argument is the user's
    text)."""
    from ...privacy.controls import terminal_text

    return terminal_text(quoted_short(f"memwork: {message} (see `{prog} --help`)"))


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's (the root parser's: a verb's parser is given what is left), first
        remembering the long arguments an error may quote."""
        given = list(sys.argv[1:] if args is None else args)
        _long_args[:] = [a for a in given if isinstance(a, str) and len(a) > QUOTED]
        return super().parse_args(given, namespace)

    def error(self, message: str) -> NoReturn:
        self.exit(2, usage_line(message, self.prog) + "\n")


if TYPE_CHECKING:
    #: What ``add_subparsers(parser_class=_Parser)`` returns; each verb adds its parser to it.
    SubParsers = argparse._SubParsersAction[_Parser]


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def global_options(p: argparse.ArgumentParser) -> None:
    """``--db``, ``--demo``, ``--json``, ``--curator-key`` and ``--version``, before any
    verb."""
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
    p.add_argument(
        "--curator-key",
        metavar="FILE",
        help="decide as the store's curator with the key in FILE (review approve/reject/"
        "merge, review off, a restore past review; memwork curator init makes one)",
    )
    p.add_argument("--version", action="store_true", help="print the version and exit")


def is_positional(param: Param) -> bool:
    """Whether the CLI takes ``param`` as a positional argument (its spelling is a word
    in capitals, such as ``TEXT`` or ``FILE|-``)."""
    return bool(param.cli) and not param.cli.startswith("-")


def flags(param: Param) -> list[str]:
    """The option strings of a flag parameter (``--on-duplicate``, ``-m --message``)."""
    return param.cli.split() if param.cli else ["--" + param.name.replace("_", "-")]


def _pointing_elsewhere(param: Param, convert: Callable[[str], Any] | None) -> Callable[[str], Any]:
    """argparse's ``type`` for ``param``: a value another verb takes is refused with
    that verb's words (argparse converts a value before it checks the choices)."""

    def check(value: str) -> Any:
        instead = pointing_elsewhere(param, value, lambda op: f"`memwork {op.cli}`")
        if instead:
            raise argparse.ArgumentTypeError(
                f"must be one of {', '.join(param.choices)} (got {value!r}){instead}"
            )
        return value if convert is None else convert(value)

    check.__name__ = param.type.rstrip("?")  # argparse names the type in its messages
    return check


def add_argument(parser: argparse.ArgumentParser, param: Param) -> None:
    """``param`` as an argument of ``parser``."""
    kind = param.type.rstrip("?")
    kw: dict[str, Any] = {}
    if param.help:
        kw["help"] = param.help
    if param.choices:
        kw["choices"] = list(param.choices)
    if kind in _TYPES:
        kw["type"] = _TYPES[kind]
    if param.elsewhere:
        kw["type"] = _pointing_elsewhere(param, kw.get("type"))
    if is_positional(param):
        if kind == "strs":
            kw["nargs"] = "+" if param.default is ... else "*"
        elif param.default is not ...:
            kw["nargs"] = "?"
            kw["default"] = param.default
        parser.add_argument(param.name, metavar=param.cli, **kw)
        return
    kw["dest"] = param.name
    if param.metavar:
        kw["metavar"] = param.metavar
    if kind == "bool":
        parser.add_argument(
            *flags(param), action="store_true", help=kw.get("help"), dest=param.name
        )
        return
    if kind == "strs":
        kw["action"] = "append"
        kw["default"] = None if param.default is None else []
    elif param.default is ... and not param.type.endswith("?"):
        kw["required"] = True
    elif param.default is ...:
        kw["default"] = None  # nullable: the operation says what it needs instead
    else:
        kw["default"] = param.default
    parser.add_argument(*flags(param), **kw)


class _Tree:
    """Sub-parsers made so far, by their words (``("wm",)``, ``("wm", "scratch")``)."""

    def __init__(self, root: argparse.ArgumentParser) -> None:
        self.subs: dict[tuple[str, ...], SubParsers] = {
            (): root.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
        }

    def below(self, words: tuple[str, ...], op: Op) -> SubParsers:
        """The sub-parsers that hold the verbs under ``words`` (groups made on the way)."""
        if words in self.subs:
            return self.subs[words]
        parent = self.below(words[:-1], op)
        help_text, group_flags = GROUPS[" ".join(words)]
        group = parent.add_parser(words[-1], help=help_text, description=help_text)
        _json_flag(group)
        for name in group_flags:
            add_argument(group, next(p for p in op.params if p.name == name))
        dest = "_".join((*words, "action"))
        self.subs[words] = group.add_subparsers(
            dest=dest, metavar="ACTION", parser_class=_Parser, required=True
        )
        return self.subs[words]


def _group_flags(words: tuple[str, ...]) -> set[str]:
    return {name for n in range(1, len(words)) for name in GROUPS[" ".join(words[:n])][1]}


def build(verb: str | None = None) -> argparse.ArgumentParser:
    """The parser of every verb, or only of ``verb`` (its first word) when it is one."""
    p = _Parser(prog="memwork", description="A memory workbench for AI agents.")
    global_options(p)
    tree = _Tree(p)
    for op in OPERATIONS:
        if not op.cli or "cli" not in op.doors:
            continue
        words = tuple(op.cli.split())
        if verb is not None and words[0] != verb:
            continue
        sub = tree.below(words[:-1], op)
        c = sub.add_parser(words[-1], help=op.summary, description=op.summary)
        c.set_defaults(op=op.name)
        _json_flag(c)
        skip = _group_flags(words)
        for param in op.params:
            if "cli" in param.doors and param.name not in skip:
                add_argument(c, param)
    return p


def verbs() -> set[str]:
    """The first word of every CLI verb."""
    return {op.cli.split()[0] for op in OPERATIONS if op.cli and "cli" in op.doors}
