"""Precomputed scanning plan for one gitleaks rule (used by convert.py, stored in the JSON).

- ``prose_end``: gitleaks ends most tokens with "a quote, white space, ';', an escaped
  newline or the end of text"; agent prose ends them with '.', ',', ')' too. The scan
  pattern also accepts those when white space or the end follows.
- ``anchored``: when every match must begin with one of the rule's keywords (found by
  walking the pattern with the stdlib's own regex parser), the rule is run with
  ``pattern.match(text, pos)`` at the positions where the keyword gate found those
  keywords instead of a search over the whole text. gitleaks' identifier prefix
  ``[\w.-]{0,50}?`` is dropped for that (``prefix_stripped``): it only moves the start of the
  match, never the secret; the start is rebuilt when an allowlist looks at the match.
"""

from __future__ import annotations

import re

# gitleaks ends most tokens with "a quote, white space, ';', an escaped newline or the end";
# prose ends them with '.', ',', ')' too. prose_boundary also accepts those, when white
# space or the end follows (so "abc.def" still does not end a token at the dot).
_GL_END = r"""(?:[\x60'"\s;]|\\[nr]|$)"""
_PROSE_END = r"""(?:[\x60'"\s;]|\\[nr]|$|[.,:!?)\]}>](?=\s|$))"""
# azure-ad-client-secret has its own end: add the sentence end to it as well.
_PROSE_ENDS = [
    (_GL_END, _PROSE_END),
    (r"""(?:$|[\\'"\x60\s<),])""", r"""(?:$|[\\'"\x60\s<),]|[.:!?](?=\s|$))"""),
]


def literal_prefixes(pattern: str, maxlen: int = 24, maxn: int = 2000) -> set[str] | None:
    """Lower-cased literal strings every match of ``pattern`` starts with (zero-width
    assertions skipped), or None when some match may start otherwise (a class, a repeat
    that may be empty, too many alternatives)."""
    from re import _constants as C  # the stdlib's own parser (3.11+)
    from re import _parser as P

    class Stop(Exception):
        pass

    def walk(items, prefixes: set[str]) -> tuple[set[str], set[str]]:
        """(open prefixes after ``items``, prefixes closed inside)"""
        closed: set[str] = set()
        for op, av in items:
            if not prefixes:
                break
            if op is C.AT:
                continue
            if op is C.LITERAL:
                prefixes = {p + chr(av).lower() for p in prefixes}
            elif op is C.IN:
                lits = [chr(iav).lower() for iop, iav in av if iop is C.LITERAL]
                chars = set(lits)
                if len(lits) != len(av) or len(chars) > 4:
                    closed |= prefixes  # a wide class ends the literal prefix
                    prefixes = set()
                else:
                    prefixes = {p + c for p in prefixes for c in chars}
            elif op is C.SUBPATTERN:
                prefixes, c2 = walk(av[-1], prefixes)
                closed |= c2
            elif op is C.BRANCH:
                new: set[str] = set()
                for alt in av[1]:
                    o, c2 = walk(alt, set(prefixes))
                    new |= o
                    closed |= c2
                prefixes = new
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] == 0:
                o, c2 = walk(av[2], set(prefixes))  # one pass, or none
                closed |= c2
                if av[1] == 1:
                    prefixes = prefixes | o
                else:
                    closed |= o
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
                o, c2 = walk(av[2], set(prefixes))
                closed |= o | c2  # one pass for sure; what follows may vary
                prefixes = set()
            else:
                closed |= prefixes  # anything else ends the literal prefix here
                prefixes = set()
            if len(prefixes) + len(closed) > maxn:
                raise Stop
            done = {p for p in prefixes if len(p) >= maxlen}
            closed |= done
            prefixes -= done
        return prefixes, closed

    try:
        o, c = walk(P.parse(pattern, re.ASCII), {""})
    except (Stop, re.error):
        return None
    result = o | c
    return None if "" in result else result


_PREFIXES = (r"(?i)[\w.-]{0,50}?", r"[\w.-]{0,50}?")


def plan(regex: str, keywords: list[str], prose_boundary: bool = True) -> dict:
    """The scanning plan of one rule (see the module docstring)."""
    rx = regex
    if prose_boundary:
        for old, new in _PROSE_ENDS:
            if rx.endswith(old):
                rx = rx[: -len(old)] + new
    cand, stripped = rx, False
    for p in _PREFIXES:
        if rx.startswith(p):
            cand = ("(?i)" if p.startswith("(?i)") else "") + rx[len(p) :]
            stripped = True
            break
    # okta, sumologic, cohere...: a second prefix inside the identifier group,
    # "[\w.-]{0,50}?(?i:[\w.-]{0,50}?(?:okta)...": two nested lazy runs backtrack
    # quadratically in Python (37 s on 20,000 characters); it moves the start only, too.
    inner = r"(?i:[\w.-]{0,50}?"
    if stripped and cand.startswith(inner):
        cand = "(?i:" + cand[len(inner) :]
    maxlen = max((len(k) for k in keywords), default=0)
    lits = literal_prefixes(cand, maxlen=maxlen) if keywords else None
    by_keyword = bool(lits) and all(any(lit.startswith(k) for k in keywords) for lit in lits)
    if not by_keyword and keywords:
        # Anchor at literals of the pattern itself ("lob", "kind:"): every match starts
        # with one of them, found with str.find once the rule's keywords let it run.
        lits = literal_prefixes(cand, maxlen=8)
        if lits and min(len(lit) for lit in lits) < 3:
            lits = None
        if lits:  # "lob" makes "lob:", "lob=live"... redundant
            lits = {x for x in lits if not any(o != x and x.startswith(o) for o in lits)}
    anchored = bool(lits)
    quick: list[str] = []
    word_start = False
    if anchored:
        # What every match must start with, longer than the keyword where the pattern says
        # so ("sk-proj-", not "sk"): checked with str.startswith at a found keyword before
        # the rule's pattern is compiled (compiling costs ~1 ms a rule; "sk" is in "task").
        longer = literal_prefixes(cand, maxlen=16) or set()
        quick = sorted(x for x in longer if not any(o != x and x.startswith(o) for o in longer))
        word_start = _starts_at_word_boundary(cand) and all(
            q[:1].isascii() and (q[:1].isalnum() or q[:1] == "_") for q in quick
        )
    return {
        "scan": cand if anchored else rx,
        "anchored": anchored,
        "anchor": "keywords" if by_keyword else ("literals" if anchored else None),
        "anchor_literals": sorted(lits) if anchored and not by_keyword else [],
        "prefix_stripped": stripped and anchored,
        "quick": quick,
        "word_start": word_start,
    }


def _starts_at_word_boundary(pattern: str) -> bool:
    """Whether the pattern begins with ``\\b`` (so a match needs a non-word character, or
    nothing, before it)."""
    from re import _constants as C
    from re import _parser as P

    items = list(P.parse(pattern, re.ASCII))
    while items and items[0][0] is C.SUBPATTERN and not items[0][1][0]:
        items = list(items[0][1][-1])  # a non-capturing group: look inside
    return bool(items) and items[0][0] is C.AT and items[0][1] is C.AT_BOUNDARY
