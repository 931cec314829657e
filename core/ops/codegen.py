"""Files made from the operations' declarations: ``Memory``'s methods and the table of operations.

``python -m memwork.core.ops.codegen`` (``make generate``) rewrites
``core/ops/memory_ops.py`` (a typed method per operation, whose docstring is the
operation's text) and the section of ``docs/CLI.md`` between the
``<!-- operations -->`` markers (every operation at every door). A test fails
when either is stale, naming this command.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from .operations import DOORS, GROUPS, OPERATIONS, Op, Param
from .shapes import SHAPES

ROOT = Path(__file__).resolve().parents[2]
MEMORY_OPS = Path(__file__).resolve().parent / "memory_ops.py"
#: The document that holds the table of operations, between BEGIN and END.
OPERATIONS_DOC = ROOT / "docs" / "CLI.md"
BEGIN = "<!-- operations: made by `make generate` from core/ops/operations.py; do not edit -->"
END = "<!-- /operations -->"

_PY_TYPES = {
    "str": "str",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "strs": "Iterable[str]",
    "json": "Any",
    "object": "dict[str, Any]",
    "objects": "list[dict[str, Any]]",
}


def py_type(param: Param) -> str:
    """The annotation of ``param`` in Python."""
    base = _PY_TYPES[param.type.rstrip("?")]
    if param.type.endswith("?") and base != "Any":
        return f"{base} | None"
    return base


def return_type(op: Op) -> str:
    """What a ``Memory`` method returns, from its shape."""
    kind = SHAPES[op.result]["type"]
    kinds = kind if isinstance(kind, list) else [kind]
    parts = []
    for k in kinds:
        parts.append(
            {
                "object": "dict[str, Any]",
                "array": "list[dict[str, Any]]",
                "string": "str",
                "null": "None",
            }[k]
        )
    return " | ".join(parts)


def api_positional(param: Param, op: Op) -> bool:
    """Whether ``param`` is positional in Python: as declared, else when the CLI takes
    it positionally or as its group's flag (``wm --session``)."""
    if param.positional is not None:
        return param.positional
    if param.cli and not param.cli.startswith("-"):
        return True
    words = op.cli.split()
    return any(param.name in GROUPS.get(" ".join(words[:n]), ("", ()))[1] for n in range(1, 3))


def _literal(value: object) -> str:
    """A default as Python source (strings in double quotes, as the code is written)."""
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def _sentence(text: str) -> str:
    return text if text.endswith((".", "…")) else text + "."


def _wrap(text: str, indent: str, width: int = 96) -> list[str]:
    return textwrap.wrap(
        text, width=width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
    ) or [indent.rstrip()]


def _docstring(op: Op, params: tuple[Param, ...]) -> list[str]:
    ind = " " * 8
    lines = [f'{ind}"""{op.summary[0].upper()}{op.summary[1:]}.']
    for text in (op.when, op.doc):
        if text:
            lines += ["", *_wrap(text.replace('"""', "'''"), ind)]
    if op.review:
        note = 'While the store\'s review is on, the result is the proposal ("proposed": True).'
        lines += ["", *_wrap(note, ind)]
    if params:
        lines += ["", f"{ind}Args:"]
        for p in params:
            lines += _wrap(f"{p.name}: {_sentence(p.help)}", ind + "    ")
    lines.append(f'{ind}"""')
    return lines


def _method(op: Op) -> list[str]:
    params = tuple(p for p in op.params if "api" in p.doors)
    positional = [p for p in params if api_positional(p, op)]
    keyword = [p for p in params if not api_positional(p, op)]
    sig = ["        self,"]
    for p in positional:
        default = "" if p.default is ... else f" = {_literal(p.default)}"
        sig.append(f"        {p.name}: {py_type(p)}{default},")
    if keyword:
        sig.append("        *,")
        for p in keyword:
            default = "" if p.default is ... else f" = {_literal(p.default)}"
            sig.append(f"        {p.name}: {py_type(p)}{default},")
    given = [f'                "{p.name}": {p.name},' for p in params]
    return [
        f"    def {op.name}(",
        *sig,
        f"    ) -> {return_type(op)}:",
        *_docstring(op, params),
        f"        result: {return_type(op)} = self._operation(",
        f'            "{op.name}",',
        *(["            {", *given, "            },"] if given else ["            {},"]),
        "        )",
        "        return result",
        "",
    ]


def memory_source() -> str:
    """The text of ``core/ops/memory_ops.py``."""
    head = [
        "# Made by `make generate` (python -m memwork.core.ops.codegen)",
        "# from core/ops/operations.py:",
        "# do not edit; declare the operation there and generate again.",
        "# ruff: noqa: A002",
        '"""``Memory``\'s methods, one per operation (see :mod:`core.ops.operations`).',
        "",
        "Each method checks its arguments as every JSON door does (one line naming the",
        "field on a wrong type) and runs the operation's core function with this",
        "``Memory``'s store, clock and audit actor.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Iterable",
        "from typing import Any",
        "",
        "",
        "class Operations:",
        '    """The operations, as methods; :class:`core.ops.memory.Memory` runs them."""',
        "",
        "    def _operation(self, name: str, params: dict[str, Any]) -> Any:",
        "        raise NotImplementedError  # Memory runs it",
        "",
    ]
    body: list[str] = []
    for op in OPERATIONS:
        if "api" in op.doors and op.api != "-":
            body += _method(op)
    return "\n".join([*head, *body]).rstrip("\n") + "\n"


# -- the table of operations (docs/CLI.md) ----------------------------------------------------
def cli_usage(op: Op) -> str:
    """How the CLI spells ``op``: ``wm --session S set KEY VALUE [--ttl SECONDS]``."""
    words = op.cli.split()
    # A group's own flags follow the group's word (``wm --session S``).
    owner = {name: n for n in range(1, len(words)) for name in GROUPS[" ".join(words[:n])][1]}
    head: list[list[str]] = [[word] for word in words]
    parts: list[str] = []
    for p in op.params:
        if "cli" not in p.doors:
            continue
        if p.cli and not p.cli.startswith("-"):
            text = p.cli + (" …" if p.type.startswith("strs") else "")
            parts.append(text if p.default is ... else f"[{text}]")
            continue
        flag = (p.cli.split() if p.cli else ["--" + p.name.replace("_", "-")])[0]
        if p.type.rstrip("?") == "bool":
            value = ""
        elif p.choices:
            value = " " + "|".join(p.choices)
        else:
            value = " " + (p.metavar or p.name.upper())
        text = f"{flag}{value}" + ("…" if p.type.startswith("strs") else "")
        if p.name in owner:  # a nullable group flag (``wm [--session S]``) may be left out
            head[owner[p.name] - 1].append(f"[{text}]" if p.type.endswith("?") else text)
        else:
            parts.append(text if p.default is ... else f"[{text}]")
    return "`" + " ".join([*(w for group in head for w in group), *parts]) + "`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def operations_table() -> str:
    """The table of operations: how each door spells each operation, what it does."""
    rows = [
        "| CLI | Python · MCP · HTTP | Writes | What it does |",
        "|---|---|---|---|",
    ]
    for op in OPERATIONS:
        doors = []
        if "api" in op.doors:
            doors.append(f"`{op.name}`")
        if "mcp" in op.doors:
            doors.append(f"MCP `{op.mcp or op.name}` ({op.toolset})")
        if "http" in op.doors:
            doors.append(f"`POST /v1/{op.name}`")
        where = " · ".join(doors) if doors else "CLI only"
        writes = "review" if op.review else ("yes" if op.writes else "")
        if op.read_unless:
            writes = "with a field"
        text = op.doc or op.summary
        rows.append(f"| {_cell(cli_usage(op))} | {where} | {writes} | {_cell(text)} |")
    return "\n".join(rows)


def operations_doc_text(current: str) -> str:
    """``current`` (``docs/CLI.md``) with its operations section made again."""
    start, end = current.index(BEGIN), current.index(END)
    return current[: start + len(BEGIN)] + "\n" + operations_table() + "\n" + current[end:]


def main() -> int:
    """Write ``core/ops/memory_ops.py`` and the section of ``docs/CLI.md``; say what changed."""
    changed = []
    current = MEMORY_OPS.read_text() if MEMORY_OPS.exists() else ""
    if current != memory_source():
        MEMORY_OPS.write_text(memory_source())
        changed.append(str(MEMORY_OPS.relative_to(ROOT)))
    doc = OPERATIONS_DOC.read_text()
    if operations_doc_text(doc) != doc:
        OPERATIONS_DOC.write_text(operations_doc_text(doc))
        changed.append(str(OPERATIONS_DOC.relative_to(ROOT)))
    print("updated: " + ", ".join(changed) if changed else "up to date", file=sys.stderr)
    return 0


__all__ = ["DOORS", "main", "memory_source", "operations_doc_text", "operations_table"]

if __name__ == "__main__":
    sys.exit(main())
