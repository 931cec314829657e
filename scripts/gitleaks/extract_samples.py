"""Extract gitleaks' own true- and false-positive samples from its rule generators.

    python extract_samples.py GITLEAKS_DIR OUT_JSON [--seed 1]

gitleaks builds its default config from Go code (cmd/generate/config/rules/*.go); each rule
function lists true positives (``tps``) and false positives (``fps``) and passes them to
``utils.Validate``. Many samples are made at generate time: ``utils.GenerateSampleSecrets``
puts a secret in ~26 configuration/code templates, and ``secrets.NewSecret(regex)`` draws
a random string from a regex. There is no Go toolchain (nor module proxy) here, so this is a
small interpreter for the subset of Go those files use: string literals, ``+``, composite
literals, ``:=``/``=``/``var``, ``append``, ``for ... range``, package-level vars and helper
functions, and the gitleaks helpers (re-implemented from cmd/generate/config/utils). Random
strings come from the Go regex translated to Python (:mod:`re2py`) and drawn by ``rstr``.

Output: ``{"rules": {rule_id: {"tps": [...], "fps": [...], "errors": [...]}}, ...}``.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import rstr

sys.path.insert(0, str(Path(__file__).parent))
from re2py import translate  # noqa: E402

# ----------------------------------------------------------------------------- lexer
_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<raw>`[^`]*`)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<rune>'(?:[^'\\\n]|\\.)+')
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<op>\.\.\.|:=|==|!=|&&|\|\||\+=|\+\+|--|<=|>=|[-+*/%&|!<>=(){}\[\],;:.^])
    """,
    re.VERBOSE | re.DOTALL,
)
_SEMI_AFTER = {"ident", "str", "raw", "rune", "num"}
_SEMI_AFTER_OPS = {")", "]", "}", "++", "--"}
_SEMI_AFTER_KW = {"return", "break", "continue"}


def _unsupported(op: str) -> Any:
    def fail(a: Any, b: Any) -> Any:
        raise Unsupported(op)

    return fail


class Tok:
    __slots__ = ("kind", "val", "line")

    def __init__(self, kind: str, val: Any, line: int) -> None:
        self.kind, self.val, self.line = kind, val, line

    def __repr__(self) -> str:
        return f"{self.kind}:{self.val!r}@{self.line}"


def _go_unquote(s: str) -> str:
    body = s[1:-1]
    out, i = [], 0
    simple = {
        "n": "\n",
        "t": "\t",
        "r": "\r",
        "\\": "\\",
        '"': '"',
        "'": "'",
        "a": "\a",
        "b": "\b",
        "f": "\f",
        "v": "\v",
    }
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in simple:
            out.append(simple[d])
            i += 2
        elif d == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif d == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif d == "U":
            out.append(chr(int(body[i + 2 : i + 10], 16)))
            i += 10
        elif d in "01234567":
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise ValueError(f"bad escape \\{d}")
    return "".join(out)


def lex(src: str) -> list[Tok]:
    toks: list[Tok] = []
    line = 1
    pos = 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise SyntaxError(f"lex error at line {line}: {src[pos : pos + 20]!r}")
        kind = m.lastgroup
        text = m[0]
        newline = kind == "nl" or (kind == "bcomment" and "\n" in text) or (kind == "raw" and False)
        if newline or kind == "lcomment":
            if kind == "lcomment":
                # the newline that follows does the insertion
                pass
            elif toks and _needs_semi(toks[-1]):
                toks.append(Tok("op", ";", line))
        elif kind in ("ws", "bcomment"):
            pass
        elif kind == "raw":
            toks.append(Tok("str", text[1:-1].replace("\r", ""), line))
        elif kind == "str":
            toks.append(Tok("str", _go_unquote(text), line))
        elif kind == "rune":
            toks.append(Tok("rune", _go_unquote(text), line))
        elif kind == "num":
            toks.append(Tok("num", float(text) if "." in text else int(text), line))
        elif kind == "ident":
            toks.append(Tok("ident", text, line))
        else:
            toks.append(Tok("op", text, line))
        line += text.count("\n")
        pos = m.end()
    toks.append(Tok("op", ";", line))
    toks.append(Tok("eof", None, line))
    return toks


def _needs_semi(t: Tok) -> bool:
    if t.kind in ("str", "rune", "num"):
        return True
    if t.kind == "ident":
        return True  # keywords like return/break too; others never end a line in these files
    return t.kind == "op" and t.val in _SEMI_AFTER_OPS


# ----------------------------------------------------------------------------- runtime
class Unsupported(Exception):
    pass


class ReturnSignal(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class Func:
    def __init__(self, name: str, params: list[str], body: list[Tok], variadic: bool) -> None:
        self.name, self.params, self.body, self.variadic = name, params, body, variadic


class Spread:
    def __init__(self, value: list) -> None:
        self.value = value


class Rule(dict):
    pass


def _go_sprintf(fmt: str, args: list[Any]) -> str:
    out, ai, i = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt):
            v = fmt[i + 1]
            if v == "%":
                out.append("%")
            else:
                a = args[ai]
                ai += 1
                if v == "q":
                    out.append(json.dumps(a))
                else:
                    out.append(str(a))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Generator:
    """``secrets.NewSecret``: a random string matching a Go regex."""

    def __init__(self, seed: int) -> None:
        self.rs = rstr.Rstr(random.Random(seed))
        rnd = self.rs._random

        def handle_repeat(start: int, end: int, value: Any) -> str:
            # rstr caps every repetition at 100 (fails on "{138}"); cap only open ones.
            end = min(end, max(start, 100))
            times = rnd.randint(start, end)
            return "".join("".join(self.rs._handle_state(s) for s in value) for _ in range(times))

        self.rs._handle_repeat = handle_repeat

    def __call__(self, go_regex: str) -> str:
        py, _ = translate(go_regex)
        # rstr caps open repetitions at 100 and fails on "{250,}": bound them just above n.
        py = re.sub(r"(?<!\\)\{(\d+),\}", lambda m: f"{{{m[1]},{int(m[1]) + 8}}}", py)
        for _ in range(50):
            s = self.rs.xeger(py)
            if re.fullmatch(py, s, re.ASCII | re.DOTALL):
                return s
        return s


class Interp:
    def __init__(self, files: dict[str, str], seed: int) -> None:
        self.funcs: dict[str, Func] = {}
        self.pkg_vars: dict[str, list[Tok]] = {}
        self.pkg_values: dict[str, Any] = {}
        self.gen = Generator(seed)
        self.rng = random.Random(seed + 1)
        self.validated: list[tuple[dict, list[str], list[str] | dict]] = []
        self.rule_funcs: list[str] = []
        for name, src in sorted(files.items()):
            self._load(lex(src), name)

    # -- package level
    def _load(self, toks: list[Tok], fname: str) -> None:
        i = 0
        while toks[i].kind != "eof":
            t = toks[i]
            if t.kind == "ident" and t.val in ("package",):
                i += 2
            elif t.kind == "ident" and t.val == "import":
                i += 1
                if toks[i].val == "(":
                    while toks[i].val != ")":
                        i += 1
                i += 1
            elif t.kind == "ident" and t.val == "func":
                i = self._load_func(toks, i)
            elif t.kind == "ident" and t.val in ("var", "const"):
                i += 1
                if toks[i].val == "(":
                    i += 1
                    while toks[i].val != ")":
                        if toks[i].val == ";":
                            i += 1
                            continue
                        i = self._load_var(toks, i)
                    i += 1
                else:
                    i = self._load_var(toks, i)
            else:
                i += 1

    def _skip_balanced(self, toks: list[Tok], i: int) -> int:
        """From an opening bracket at ``i``, return the index after its match."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        stack = [pairs[toks[i].val]]
        i += 1
        while stack:
            v = toks[i].val if toks[i].kind == "op" else None
            if v in pairs:
                stack.append(pairs[v])
            elif v is not None and stack and v == stack[-1]:
                stack.pop()
            i += 1
        return i

    def _load_var(self, toks: list[Tok], i: int) -> int:
        name = toks[i].val
        j = i + 1
        while toks[j].val not in ("=", ";"):
            j += 1 if toks[j].val not in ("(", "[", "{") else 0
            if toks[j].val in ("(", "[", "{"):
                j = self._skip_balanced(toks, j)
        if toks[j].val == "=":
            k = j + 1
            depth = 0
            while not (depth == 0 and toks[k].val == ";" and toks[k].kind == "op"):
                if toks[k].kind == "op" and toks[k].val in "([{":
                    depth += 1
                elif toks[k].kind == "op" and toks[k].val in ")]}":
                    depth -= 1
                k += 1
            self.pkg_vars[name] = toks[j + 1 : k] + [Tok("op", ";", 0), Tok("eof", None, 0)]
            return k + 1
        return j + 1

    def _load_func(self, toks: list[Tok], i: int) -> int:
        i += 1
        if toks[i].val == "(":  # method: skip receiver
            i = self._skip_balanced(toks, i)
        name = toks[i].val
        i += 1
        assert toks[i].val == "("
        end = self._skip_balanced(toks, i)
        params, variadic = [], False
        group: list[Tok] = []
        for t in toks[i + 1 : end - 1] + [Tok("op", ",", 0)]:
            if t.val == ",":
                if group:
                    params.append(group[0].val)
                    variadic = variadic or any(g.val == "..." for g in group)
                group = []
            else:
                group.append(t)
        i = end
        ret: list[Tok] = []
        while toks[i].val != "{":
            ret.append(toks[i])
            i += 1
        body_end = self._skip_balanced(toks, i)
        body = toks[i + 1 : body_end - 1] + [Tok("op", ";", 0), Tok("eof", None, 0)]
        self.funcs[name] = Func(name, params, body, variadic)
        if [t.val for t in ret] == ["*", "config", ".", "Rule"] and not params:
            self.rule_funcs.append(name)
        return body_end

    def pkg_value(self, name: str) -> Any:
        if name not in self.pkg_values:
            ex = Exec(self, self.pkg_vars[name], {})
            self.pkg_values[name] = ex.expr()
        return self.pkg_values[name]

    def call_user(self, name: str, args: list[Any]) -> Any:
        f = self.funcs[name]
        env = dict(zip(f.params, args, strict=False))
        try:
            Exec(self, f.body, env).block()
        except ReturnSignal as r:
            return r.value
        return None

    def run_rule(self, name: str) -> Any:
        return self.call_user(name, [])


_ENCODINGS = {
    "StdEncoding": lambda b: base64.b64encode(b).decode(),
    "RawStdEncoding": lambda b: base64.b64encode(b).decode().rstrip("="),
    "URLEncoding": lambda b: base64.urlsafe_b64encode(b).decode(),
    "RawURLEncoding": lambda b: base64.urlsafe_b64encode(b).decode().rstrip("="),
}


class Exec:
    """Statement and expression evaluation over one token list."""

    def __init__(self, interp: Interp, toks: list[Tok], env: dict[str, Any]) -> None:
        self.I, self.t, self.i, self.env = interp, toks, 0, env

    # -- helpers
    @property
    def cur(self) -> Tok:
        return self.t[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.t[self.i + k]

    def eat(self, val: str | None = None) -> Tok:
        t = self.t[self.i]
        if val is not None and t.val != val:
            raise SyntaxError(f"expected {val!r}, got {t!r}")
        self.i += 1
        return t

    def is_op(self, val: str) -> bool:
        return self.cur.kind == "op" and self.cur.val == val

    def lookup(self, name: str) -> Any:
        if name in self.env:
            return self.env[name]
        if name in self.I.pkg_vars:
            return self.I.pkg_value(name)
        if name in ("nil",):
            return None
        if name in ("true", "false"):
            return name == "true"
        raise Unsupported(f"unknown name {name}")

    # -- statements
    def block(self) -> None:
        while self.cur.kind != "eof":
            if self.is_op(";"):
                self.i += 1
                continue
            self.statement()

    def statement(self) -> None:
        t = self.cur
        if t.kind == "ident" and t.val == "return":
            self.i += 1
            val = None if self.is_op(";") else self.expr()
            raise ReturnSignal(val)
        if t.kind == "ident" and t.val == "var":
            self.i += 1
            if self.is_op("("):
                self.i += 1
                while not self.is_op(")"):
                    if self.is_op(";"):
                        self.i += 1
                        continue
                    self.var_spec()
                self.i += 1
            else:
                self.var_spec()
            return
        if t.kind == "ident" and t.val == "for":
            self.for_stmt()
            return
        if t.kind == "ident" and t.val in ("if", "switch", "go", "defer"):
            raise Unsupported(f"statement {t.val} at line {t.line}")
        # assignment or expression statement
        start = self.i
        names = []
        if t.kind == "ident":
            j = self.i
            while self.t[j].kind == "ident" and self.t[j + 1].val == ",":
                names.append(self.t[j].val)
                j += 2
            if self.t[j].kind == "ident" and self.t[j + 1].val in (":=", "=", "+="):
                names.append(self.t[j].val)
                op = self.t[j + 1].val
                self.i = j + 2
                val = self.expr()
                if len(names) != 1:
                    raise Unsupported("multi-assign")
                if op == "+=":
                    val = self.env[names[0]] + val
                if names[0] != "_":
                    self.env[names[0]] = val
                return
        self.i = start
        self.expr()

    def var_spec(self) -> None:
        name = self.eat().val
        if self.is_op("="):
            self.i += 1
            self.env[name] = self.expr()
            return
        # a type, then maybe "= expr"
        typ = self.type_expr()
        if self.is_op("="):
            self.i += 1
            self.env[name] = self.expr()
        else:
            self.env[name] = [] if typ.startswith("[]") else ({} if typ.startswith("map") else "")

    def for_stmt(self) -> None:
        line = self.cur.line
        self.eat("for")
        if self.is_op("{"):
            raise Unsupported(f"infinite for at line {line}")
        names = []
        while self.cur.kind == "ident":
            names.append(self.eat().val)
            if self.is_op(","):
                self.i += 1
        if not (self.is_op(":=") and self.peek().val == "range"):
            raise Unsupported(f"for without range at line {line}")
        self.i += 2
        coll = self.expr(no_composite=True)
        body_start = self.i
        body_end = self.I._skip_balanced(self.t, self.i)
        body = self.t[body_start + 1 : body_end - 1] + [Tok("op", ";", 0), Tok("eof", None, 0)]
        items = list(coll.items()) if isinstance(coll, dict) else list(enumerate(coll))
        for k, v in items:
            if names and names[0] != "_":
                self.env[names[0]] = k
            if len(names) > 1 and names[1] != "_":
                self.env[names[1]] = v
            Exec(self.I, body, self.env).block()
        self.i = body_end

    # -- types
    def type_expr(self) -> str:
        parts = []
        while True:
            t = self.cur
            if t.kind == "op" and t.val == "[":
                self.i += 1
                if self.is_op("]"):
                    self.i += 1
                    parts.append("[]")
                else:
                    raise Unsupported("array type")
            elif t.kind == "op" and t.val == "*":
                self.i += 1
                parts.append("*")
            elif t.kind == "ident" and t.val == "map":
                self.i += 1
                self.eat("[")
                k = self.type_expr()
                self.eat("]")
                parts.append(f"map[{k}]")
            elif t.kind == "ident":
                self.i += 1
                name = t.val
                if self.is_op(".") and self.peek().kind == "ident":
                    self.i += 1
                    name += "." + self.eat().val
                parts.append(name)
                return "".join(parts)
            else:
                raise SyntaxError(f"type at {t!r}")

    # -- expressions
    def expr(self, no_composite: bool = False) -> Any:
        return self.binary(0, no_composite)

    _PREC = {
        "||": 1,
        "&&": 2,
        "==": 3,
        "!=": 3,
        "<": 3,
        ">": 3,
        "<=": 3,
        ">=": 3,
        "+": 4,
        "-": 4,
        "*": 5,
        "/": 5,
        "%": 5,
    }

    def binary(self, min_prec: int, nc: bool) -> Any:
        left = self.unary(nc)
        while self.cur.kind == "op" and self._PREC.get(self.cur.val, 0) > min_prec:
            op = self.eat().val
            right = self.binary(self._PREC[op], nc)
            left = {
                "+": lambda a, b: a + b,
                "-": lambda a, b: a - b,
                "*": lambda a, b: a * b,
                "==": lambda a, b: a == b,
                "!=": lambda a, b: a != b,
                "&&": lambda a, b: a and b,
                "||": lambda a, b: a or b,
            }.get(op, _unsupported(op))(left, right)
        return left

    def unary(self, nc: bool) -> Any:
        if self.is_op("&") or self.is_op("*"):
            self.i += 1
            return self.unary(nc)
        if self.is_op("!"):
            self.i += 1
            return not self.unary(nc)
        if self.is_op("-"):
            self.i += 1
            return -self.unary(nc)
        return self.primary(nc)

    def composite(self, typ: str) -> Any:
        self.eat("{")
        is_map = typ.startswith("map")
        is_struct = not typ.startswith("[]") and not is_map
        out_list: list = []
        out_map: dict = {}
        elem = typ[2:] if typ.startswith("[]") else re.sub(r"^map\[[^\]]*\]", "", typ)
        while not self.is_op("}"):
            if self.is_op(";") or self.is_op(","):
                self.i += 1
                continue
            if is_struct:
                key = self.eat().val
                self.eat(":")
                try:
                    out_map[key] = self.element(elem)
                except (Unsupported, KeyError, IndexError, TypeError, ValueError) as e:
                    out_map[key] = None
                    self._skip_element()
                    out_map.setdefault("_errors", []).append(f"{key}: {e}")
            elif is_map:
                key = self.element(elem)
                self.eat(":")
                out_map[key] = self.element(elem)
            else:
                out_list.append(self.element(elem))
        self.eat("}")
        if is_struct:
            return Rule(out_map) if typ.endswith("Rule") else out_map
        return out_map if is_map else out_list

    def _skip_element(self) -> None:
        depth = 0
        while True:
            t = self.cur
            if t.kind == "op" and t.val in "([{":
                depth += 1
            elif t.kind == "op" and t.val in ")]}":
                if depth == 0:
                    return
                depth -= 1
            elif t.kind == "op" and t.val == "," and depth == 0:
                return
            self.i += 1

    def element(self, elem_type: str) -> Any:
        if self.is_op("{"):  # elided type in a composite literal
            return self.composite(elem_type.lstrip("*&"))
        return self.expr()

    def primary(self, nc: bool) -> Any:
        t = self.cur
        if t.kind == "str":
            self.i += 1
            val: Any = t.val
        elif t.kind == "num":
            self.i += 1
            val = t.val
        elif t.kind == "rune":
            self.i += 1
            val = ord(t.val)
        elif t.kind == "op" and t.val == "(":
            self.i += 1
            val = self.expr()
            self.eat(")")
        elif t.kind == "op" and t.val == "[" or (t.kind == "ident" and t.val == "map"):
            typ = self.type_expr()
            if self.is_op("("):  # conversion such as []byte(x)
                self.i += 1
                val = self.expr()
                self.eat(")")
            else:
                val = self.composite(typ)
        elif t.kind == "ident" and t.val == "func":
            raise Unsupported(f"func literal at line {t.line}")
        elif t.kind == "ident":
            val = self.qualified(nc)
        else:
            raise SyntaxError(f"unexpected {t!r}")
        # postfix: index, slice, spread
        while True:
            if self.is_op("["):
                self.i += 1
                idx = self.expr()
                if self.is_op(":"):
                    self.i += 1
                    hi = None if self.is_op("]") else self.expr()
                    val = val[idx:hi]
                else:
                    val = val[idx]
                self.eat("]")
            elif self.is_op("..."):
                self.i += 1
                val = Spread(val)
            else:
                return val

    def args(self) -> list[Any]:
        self.eat("(")
        out = []
        while not self.is_op(")"):
            if self.is_op(",") or self.is_op(";"):
                self.i += 1
                continue
            out.append(self.expr())
        self.eat(")")
        return out

    def qualified(self, nc: bool) -> Any:
        parts = [self.eat().val]
        while self.is_op(".") and self.peek().kind == "ident":
            self.i += 1
            parts.append(self.eat().val)
        name = ".".join(parts)
        if (
            self.is_op("{")
            and not nc
            and (len(parts) > 1 or parts[0][:1].isupper())
            and (name.startswith(("config.", "regexp.")))
        ):
            return self.composite(name)
        if self.is_op("("):
            return self.call(name, parts)
        if len(parts) == 1:
            return self.lookup(name)
        base = self.lookup(parts[0])
        for p in parts[1:]:
            base = base[p]
        return base

    def call(self, name: str, parts: list[str]) -> Any:
        line = self.cur.line
        raw_args = self.args()
        args: list[Any] = []
        for a in raw_args:
            if isinstance(a, Spread):
                args.extend(a.value)
            else:
                args.append(a)
        interp = self.I
        if name == "append":
            return list(args[0]) + args[1:]
        if name == "len":
            return len(args[0])
        if name in ("string", "byte"):
            return args[0]
        if name == "secrets.NewSecret":
            return interp.gen(args[0])
        if name == "newPlausibleSecret":
            stop = interp.pkg_value("DefaultStopWords")
            for _ in range(1000):
                s = interp.gen(args[0])
                if re.search("[1-9]", s) and not any(w in s.lower() for w in stop):
                    return s
            raise Unsupported("no plausible secret")
        if name == "fmt.Sprintf":
            return _go_sprintf(args[0], args[1:])
        if name == "strings.ToUpper":
            return args[0].upper()
        if name == "strings.ToLower":
            return args[0].lower()
        if name == "strings.Repeat":
            return args[0] * args[1]
        if name == "strings.Join":
            return args[1].join(args[0])
        if name == "strings.ReplaceAll":
            return args[0].replace(args[1], args[2])
        if parts[-1] == "EncodeToString" and parts[-2] in _ENCODINGS:
            data = args[0].encode() if isinstance(args[0], str) else bytes(args[0])
            return _ENCODINGS[parts[-2]](data)
        if name in ("regexp.MustCompile", "regexp.QuoteMeta"):
            return args[0] if name.endswith("Compile") else re.escape(args[0])
        if name.startswith("utils."):
            return self.utils(parts[-1], args, line)
        if name in interp.funcs:
            return interp.call_user(name, args)
        raise Unsupported(f"call {name} at line {line}")

    def utils(self, fn: str, a: list[Any], line: int) -> Any:
        if fn in (
            "Numeric",
            "Hex",
            "AlphaNumeric",
            "AlphaNumericExtendedShort",
            "AlphaNumericExtended",
            "AlphaNumericExtendedLong",
        ):
            cls = {
                "Numeric": "[0-9]",
                "Hex": "[a-f0-9]",
                "AlphaNumeric": "[a-z0-9]",
                "AlphaNumericExtendedShort": "[a-z0-9_-]",
                "AlphaNumericExtended": r"[a-z0-9=_\-]",
                "AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]",
            }[fn]
            return f"{cls}{{{a[0]}}}"
        if fn == "Hex8_4_4_4_12":
            return r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if fn == "GenerateSampleSecret":
            return f'{a[0]}_api_token = "{a[1]}"'
        if fn == "GenerateSampleSecrets":
            return [
                t.replace("{i}", a[0]).replace("{I}", a[0].upper()).replace("{s}", a[1])
                for t in SAMPLE_TEMPLATES
            ]
        if fn in ("GenerateSemiGenericRegex", "GenerateUniqueTokenRegex", "MergeRegexps"):
            return f"<regex {fn}>"  # the converted toml has the real pattern
        if fn in ("Validate", "ValidateWithPaths"):
            rule, tps, fps = a[0], a[1], a[2] if len(a) > 2 else None
            self.I.validated.append((rule, tps, fps))
            return rule
        raise Unsupported(f"utils.{fn} at line {line}")


# The templates of utils.GenerateSampleSecrets (cmd/generate/config/utils/generate.go).
SAMPLE_TEMPLATES = [
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    '{i}Token = "{s}"',
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{i}_TOKEN = "{s}"',
    '{i}_TOKEN := "{s}"',
    '{i}_TOKEN ::= "{s}"',
    '{i}_TOKEN :::= "{s}"',
    '{i}_TOKEN ?= "{s}"',
]


def extract(gl_dir: Path, seed: int) -> dict:
    rules_dir = gl_dir / "cmd/generate/config/rules"
    files = {
        p.name: p.read_text() for p in rules_dir.glob("*.go") if not p.name.endswith("_test.go")
    }
    interp = Interp(files, seed)
    out: dict[str, dict] = {}
    failures: dict[str, str] = {}
    for fname in interp.rule_funcs:
        before = len(interp.validated)
        try:
            rule = interp.run_rule(fname)
        except (Unsupported, SyntaxError, KeyError, IndexError, TypeError, ValueError) as e:
            failures[fname] = f"{type(e).__name__}: {e}"
            continue
        for rule_v, tps, fps in interp.validated[before:]:
            rid = (rule_v or rule or {}).get("RuleID") or f"?{fname}"
            entry = out.setdefault(
                rid, {"function": fname, "tps": [], "fps": [], "tp_paths": [], "fp_paths": []}
            )
            if isinstance(tps, dict):
                entry["tp_paths"] += [{"path": p, "text": s} for p, s in tps.items()]
                entry["tps"] += list(tps.values())
            else:
                entry["tps"] += list(tps or [])
            if isinstance(fps, dict):
                entry["fp_paths"] += [{"path": p, "text": s} for p, s in fps.items()]
                entry["fps"] += list(fps.values())
            else:
                entry["fps"] += list(fps or [])
        if len(interp.validated) == before:
            failures[fname] = "no utils.Validate call"
    return {"seed": seed, "rules": out, "failures": failures, "functions": len(interp.rule_funcs)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("gl_dir")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    data = extract(Path(a.gl_dir), a.seed)
    Path(a.out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    n_tp = sum(len(r["tps"]) for r in data["rules"].values())
    n_fp = sum(len(r["fps"]) for r in data["rules"].values())
    print(
        f"functions {data['functions']}, rules with samples {len(data['rules'])}, "
        f"tps {n_tp}, fps {n_fp}, failures {len(data['failures'])}"
    )
    for k, v in data["failures"].items():
        print("  FAIL", k, v)


if __name__ == "__main__":
    main()
