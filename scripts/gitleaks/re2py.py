"""Translate a Go RE2 pattern (as written in gitleaks.toml) into an equivalent Python ``re``
pattern.

What differs between Go's regexp (RE2 syntax) and Python's ``re`` for the patterns gitleaks
ships, and what this module does about each:

- ``(?i)`` (or any flag group) in the middle of a pattern: RE2 applies it from there to the
  end of the enclosing group; Python only accepts global flags at the very start. The rest
  of the enclosing group is wrapped in a scoped group ``(?i:...)``, closed and reopened
  around each ``|`` of that group so alternation keeps its meaning.
- ``\\z`` (end of text) is Python's ``\\Z``; RE2 has no ``\\Z``.
- POSIX classes inside brackets (``[[:alnum:]]``) are spelled out as ASCII ranges.
- ``\\Q...\\E`` literal spans are escaped.
- ``(?<name>...)`` (Go 1.22+) becomes ``(?P<name>...)``.
- ``{,n}`` is a literal in RE2 and a repetition in Python 3.11: escaped.
- A ``[`` inside a class and the doubled set operators ``--`` ``&&`` ``~~`` ``||`` inside a
  class are escaped (Python warns that they may change meaning).
- ``\\w \\d \\s \\b`` and ``(?i)`` are ASCII-only in RE2: compile the result with
  ``re.ASCII`` (:data:`FLAGS`). (RE2's ``\\s`` lacks ``\\v``; Python's ASCII ``\\s`` has it.)
- ``$`` without ``(?m)``: RE2 matches only at the end of text, Python also before a final
  newline. Every gitleaks pattern that uses ``$`` also accepts ``\\s`` at the same place, so
  this is left alone (and noted).

Not translatable (reported, the rule is dropped): ``(?U)`` (ungreedy flag), ``\\p{..}``
Unicode classes with names Python lacks, ``\\C``.
"""

from __future__ import annotations

import re

FLAGS = re.ASCII

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "word": "a-zA-Z0-9_",
    "xdigit": "0-9A-Fa-f",
}


class Untranslatable(ValueError):
    pass


def translate(src: str) -> tuple[str, list[str]]:
    """``(python_pattern, notes)``; notes name each construct that was rewritten."""
    out: list[str] = []
    notes: list[str] = []
    # One frame per open group: how many scoped flag groups we opened inside it, and
    # which flag strings they were (to reopen after a '|').
    stack: list[list[str]] = [[]]
    i, n = 0, len(src)

    def note(s: str) -> None:
        if s not in notes:
            notes.append(s)

    while i < n:
        c = src[i]
        if c == "\\":
            if i + 1 >= n:
                raise Untranslatable("trailing backslash")
            d = src[i + 1]
            if d == "z":
                out.append(r"\Z")
                note(r"\z -> \Z")
                i += 2
            elif d == "Q":
                end = src.find(r"\E", i + 2)
                lit = src[i + 2 :] if end < 0 else src[i + 2 : end]
                out.append(re.escape(lit))
                note(r"\Q..\E escaped")
                i = n if end < 0 else end + 2
            elif d in "pP":
                raise Untranslatable(r"\p Unicode class")
            elif d == "C":
                raise Untranslatable(r"\C any byte")
            else:
                out.append(src[i : i + 2])
                i += 2
        elif c == "[":
            j, cls = _char_class(src, i, note)
            out.append(cls)
            i = j
        elif c == "(":
            if src.startswith("(?", i):
                m = re.compile(r"\(\?([a-zA-Z-]*)(\)|:)").match(src, i)
                named = re.compile(r"\(\?P?<([A-Za-z_]\w*)>").match(src, i)
                if named:
                    out.append(f"(?P<{named[1]}>")
                    if not src.startswith("(?P", i):
                        note("(?<name> -> (?P<name>")
                    stack.append([])
                    i = named.end()
                elif m:
                    flags = m[1]
                    if "U" in flags:
                        raise Untranslatable("(?U) ungreedy flag")
                    if m[2] == ":":
                        out.append(m[0])
                        stack.append([])
                    elif i == 0 and "-" not in flags:
                        out.append(m[0])  # leading global flags: Python accepts them
                    else:
                        out.append(f"(?{flags}:")
                        stack[-1].append(flags)
                        note(f"mid-pattern (?{flags}) -> scoped (?{flags}:...)")
                    i = m.end()
                else:
                    raise Untranslatable(f"group syntax at {i}: {src[i : i + 6]!r}")
            else:
                out.append("(")
                stack.append([])
                i += 1
        elif c == ")":
            frame = stack.pop() if len(stack) > 1 else None
            if frame is None:
                raise Untranslatable("unbalanced ')'")
            out.append(")" * len(frame))
            out.append(")")
            i += 1
        elif c == "|":
            frame = stack[-1]
            if frame:
                out.append(")" * len(frame))
                out.append("|")
                out.append("".join(f"(?{f}:" for f in frame))
            else:
                out.append("|")
            i += 1
        elif c == "{":
            m = re.compile(r"\{,(\d+)\}").match(src, i)
            if m:
                out.append(re.escape(m[0]))
                note("{,n} literal escaped")
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            if c == "$":
                note("$ (end of text in RE2; Python also before a final newline)")
            out.append(c)
            i += 1
    if len(stack) != 1:
        raise Untranslatable("unbalanced '('")
    out.append(")" * len(stack[0]))
    return "".join(out), notes


def _char_class(src: str, i: int, note) -> tuple[int, str]:
    """Translate the bracket expression starting at ``src[i] == '['``."""
    out = ["["]
    j = i + 1
    if j < len(src) and src[j] == "^":
        out.append("^")
        j += 1
    first = True
    prev = ""
    while j < len(src):
        c = src[j]
        if c == "]" and not first:
            out.append("]")
            return j + 1, "".join(out)
        first = False
        if c == "[":
            m = re.compile(r"\[:(\^?)([a-z]+):\]").match(src, j)
            if m:
                if m[1]:
                    raise Untranslatable("negated POSIX class inside a class")
                if m[2] not in _POSIX:
                    raise Untranslatable(f"POSIX class {m[2]}")
                out.append(_POSIX[m[2]])
                note(f"[[:{m[2]}:]] spelled out")
                j = m.end()
                prev = ""
                continue
            out.append(r"\[")
            note("'[' inside a class escaped")
            j += 1
            prev = "["
            continue
        if c == "\\":
            esc = src[j : j + 2]
            if esc in (r"\p", r"\P"):
                raise Untranslatable(r"\p Unicode class")
            if esc == r"\Q":
                raise Untranslatable(r"\Q inside a class")
            out.append(esc)
            j += 2
            prev = ""
            continue
        if c in "-&~|" and prev == c:
            out.append("\\" + c)
            note(f"doubled {c!r} inside a class escaped")
            prev = ""
            j += 1
            continue
        out.append(c)
        prev = c
        j += 1
    raise Untranslatable("unterminated character class")


def compile_go(src: str) -> tuple[re.Pattern[str], str, list[str]]:
    """Compile a Go pattern as Python: ``(compiled, python_source, notes)``."""
    py, notes = translate(src)
    return re.compile(py, FLAGS), py, notes
