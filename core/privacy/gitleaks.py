"""gitleaks' rule set, loaded as data: the scrubber's catalogue of secret formats.

`gitleaks <https://github.com/gitleaks/gitleaks>`_ (MIT) maintains ~220 rules, one per
token format a vendor issues (GitLab, Hugging Face, npm, Slack, AWS, ...) plus a generic
rule for secret-named assignments. memwork ships a pinned copy, converted from Go (RE2)
to Python ``re`` by ``scripts/gitleaks/refresh.py``: ``data/gitleaks_rules.jsonl`` (its
tag, commit and checksum in the first line) with gitleaks' licence beside it
(``data/LICENSE.gitleaks``). Nothing is fetched at run time.

Detection follows gitleaks (``detect.Detector.detectRule``) on text without a file name:

1. a rule runs only when one of its keywords occurs in the lower-cased text
   (:mod:`core.privacy.gate` finds every keyword in one pass);
2. its regex gives the matches; the secret is the rule's secret group, else the first
   group that matched, else the whole match;
3. a secret whose Shannon entropy is not above the rule's threshold is skipped, and so is
   one the global or the rule's allowlists accept.

Two departures, both precomputed by the converter into each rule's ``plan``:

- **anchoring**: when every match of a rule must begin with one of its keywords (or with
  a few literals of its own), the rule is tried with ``pattern.match`` at the places the
  gate found them instead of a search over the whole text. Python's ``re`` backtracks
  where RE2 does not, and gitleaks' lazy identifier prefix ``[\\w.-]{0,50}?`` made a
  search quadratic; the prefix only moves the start of a match, so an anchored rule drops
  it (the start is rebuilt for allowlists that look at the whole match);
- **prose ends**: a token may also end with ``. , : ! ? ) ] } >`` when white space or the
  end follows ("rotate hf_…."), where gitleaks wants a quote, a space or ``;``.

The file is read once per process, and a rule's line is parsed and its pattern compiled
the first time one of its keywords occurs, so text that needs few rules pays for few.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter
from functools import cached_property
from typing import Any

from .gate import KeywordGate

__all__ = ["DATA", "Finding", "Rule", "RuleSet", "entropy", "lower_aligned", "rule_set"]

DATA = os.path.join(os.path.dirname(__file__), "data", "gitleaks_rules.jsonl")
#: RE2's ``\w \d \s \b`` and ``(?i)`` are ASCII-only: so are the converted patterns.
FLAGS = re.ASCII
# What gitleaks' identifier prefix would have taken before an anchored match.
_IDENT_RUN = re.compile(r"[\w.-]{1,50}$", FLAGS)


#: One secret a rule found: its span in the text, the rule's id, the secret itself. (A plain
#: tuple: a NamedTuple class costs the context path ~1 ms to create at import.)
Finding = tuple[int, int, str, str]


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character (gitleaks' measure)."""
    n = len(text)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def lower_aligned(text: str) -> str:
    """``text.lower()`` with every character kept at its position.

    A few characters ('İ') lower-case to two; they are kept as they are, so positions
    found in the lower-cased text are positions in ``text``.
    """
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return low


class Allowlist:
    """One allowlist: what it looks at (the secret, the match or the line) and when it holds."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.target: str = raw.get("target", "secret")
        self.condition: str = raw.get("condition", "OR")
        self._sources: list[str] = list(raw.get("regexes", []))
        self.stopwords: tuple[str, ...] = tuple(raw.get("stopwords", []))
        self.needs_path: bool = bool(raw.get("needs_path"))

    @cached_property
    def patterns(self) -> list[re.Pattern[str]]:
        """The regexes, compiled one by one (one may start with its own global flags)."""
        return [re.compile(r, FLAGS) for r in self._sources]

    def allows(self, secret: str, match: str, line: str) -> bool:
        """Whether this allowlist accepts the finding."""
        target = match if self.target == "match" else line if self.target == "line" else secret
        by_regex = bool(target) and any(p.search(target) for p in self.patterns)
        low = secret.lower()
        by_word = bool(secret) and any(w in low for w in self.stopwords)
        if self.condition == "AND":
            if self.needs_path:
                return False  # free text has no file path: the path check fails
            checks = ([by_regex] if self._sources else []) + ([by_word] if self.stopwords else [])
            return bool(checks) and all(checks)
        return by_regex or by_word


class Rule:
    """One converted gitleaks rule (parsed from its line of the data file)."""

    def __init__(self, raw: dict[str, Any], global_allow: Allowlist) -> None:
        #: The kind a finding is reported as: the rule's id (a rule derived from another,
        #: :mod:`core.privacy.prefixed`, reports the other's).
        self.id: str = raw.get("kind") or raw["id"]
        self.global_allow = global_allow
        self.description: str = raw.get("description", "")
        self._regex: str = raw["regex"]
        self.keywords: tuple[str, ...] = tuple(raw.get("keywords", ()))
        self.entropy: float = float(raw.get("entropy") or 0.0)
        self.secret_group: int = int(raw.get("secret_group") or 0)
        self.redact: str = raw.get("redact", "secret")
        self.allowlists = [Allowlist(a) for a in raw.get("allowlists", [])]
        plan: dict[str, Any] = raw["plan"]
        self._scan: str = plan["scan"]
        self.anchor: str | None = plan["anchor"] if plan["anchored"] else None
        self.anchor_literals: tuple[str, ...] = tuple(plan.get("anchor_literals", ()))
        self.prefix_stripped: bool = bool(plan.get("prefix_stripped"))
        self.quick: tuple[str, ...] = tuple(plan.get("quick", ()))
        self.word_start: bool = bool(plan.get("word_start"))
        self.wants_match_start = any(a.target == "match" for a in self.allowlists)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The rule's regex with gitleaks' own semantics (no anchoring, gitleaks' ends)."""
        return re.compile(self._regex, FLAGS)

    @cached_property
    def scan(self) -> re.Pattern[str]:
        """The pattern memwork scans with (the plan: prose ends, prefix dropped if anchored)."""
        return re.compile(self._scan, FLAGS)

    def finding(self, text: str, m: re.Match[str], match_start: int) -> Finding | None:
        """What ``m`` reports, or None when entropy or an allowlist rules it out.

        ``match_start`` is where the match would start with gitleaks' identifier prefix
        (allowlists that look at the whole match need it).
        """
        raw = m[0]
        lead = len(raw) - len(raw.lstrip("\n"))  # gitleaks trims newlines around a match
        end = m.start() + lead + len(raw.strip("\n"))
        secret, s, e = raw.strip("\n"), m.start() + lead, end
        groups = m.re.groups
        if groups:
            if self.secret_group:
                if m.group(self.secret_group) is not None:
                    secret, (s, e) = m.group(self.secret_group), m.span(self.secret_group)
            else:
                for g in range(1, groups + 1):
                    if m.group(g):
                        secret, (s, e) = m.group(g), m.span(g)
                        break
        if self.entropy and entropy(secret) <= self.entropy:
            return None
        if self.redact == "match":  # a rule whose groups are only pieces (jwt-base64)
            s, e = m.start() + lead, end
        line_start = text.rfind("\n", 0, match_start) + 1
        line_end = text.find("\n", end)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        match_text = text[match_start:end]
        if self.global_allow.allows(secret, match_text, line):
            return None
        if any(a.allows(secret, match_text, line) for a in self.allowlists):
            return None
        return (s, e, self.id, secret)

    def detect(self, text: str) -> list[Finding]:
        """Every finding with gitleaks' semantics (whole-text search, its own ends)."""
        found = (self.finding(text, m, m.start()) for m in self.pattern.finditer(text))
        return [f for f in found if f is not None]

    def viable(self, text: str, low: str, positions: list[int]) -> list[int]:
        """The positions where a match could start, by the plan's cheap checks (what every
        match starts with, and a word boundary before it): most keyword hits in ordinary
        text ("sk" in "task") end here, before the pattern is ever compiled."""
        quick, word_start = self.quick, self.word_start
        out: list[int] = []
        for p in positions:
            if word_start and p and (text[p - 1].isalnum() or text[p - 1] == "_"):
                if text[p - 1].isascii():
                    continue
            if quick:
                for q in quick:
                    if low.startswith(q, p):
                        break
                else:
                    continue
            out.append(p)
        return out

    def scan_at(self, text: str, positions: list[int]) -> list[Finding]:
        """Findings of an anchored rule: the scan pattern tried at each position."""
        out: list[Finding] = []
        last_end = -1
        pattern = self.scan
        rebuild = self.prefix_stripped and self.wants_match_start
        for p in positions:
            if p < last_end:
                continue
            m = pattern.match(text, p)
            if m is None:
                continue
            start = p
            if rebuild:
                run = _IDENT_RUN.search(text, max(0, p - 50), p)
                if run:
                    start = run.start()
            f = self.finding(text, m, start)
            if f is not None:
                out.append(f)
                # Only a match that was reported hides the keywords inside it: one that
                # entropy or an allowlist ruled out ("password>" taking the next line's
                # "client_secret" as its value) must not hide the secret after them.
                last_end = m.end()
        return out

    def scan_all(self, text: str) -> list[Finding]:
        """Findings of a rule that cannot be anchored: a search over the whole text."""
        found = (self.finding(text, m, m.start()) for m in self.scan.finditer(text))
        return [f for f in found if f is not None]


class RuleSet:
    """The rules of one data file, parsed on demand.

    The shipped file's index (ids, keywords, the global allowlist, where each rule's
    line starts) comes precomputed from :mod:`core.privacy.gitleaks_index`, so a fresh
    process reads only the lines of the rules its text needs; any other file, or a
    shipped file the index does not describe (by its size), is read whole.
    """

    def __init__(self, path: str | os.PathLike[str] = DATA) -> None:
        self.path = os.fspath(path)
        self._lines: dict[str, str] = {}
        self._offsets: dict[str, tuple[int, int]] = {}
        index: Any = None
        if self.path == DATA:
            from . import gitleaks_index as index

            if os.stat(self.path).st_size != index.DATA_SIZE:
                index = None
        #: Rules made from others, to find a token by its prefix alone (by their own id).
        self._derived: dict[str, dict[str, Any]] = {}
        if index is not None:
            allow: dict[str, Any] = {
                "regexes": index.ALLOW_REGEXES,
                "stopwords": index.ALLOW_STOPWORDS,
            }
            entries: tuple[tuple[str, tuple[str, ...]], ...] = index.INDEX
            self._offsets = index.LINES
            derived: tuple[dict[str, Any], ...] = index.PREFIXED
        else:
            from .prefixed import derive

            with open(self.path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            header: dict[str, Any] = json.loads(lines[0])
            allow = header["allowlist"]
            entries = tuple((rid, tuple(kw)) for rid, kw in header["index"])
            self._lines = {rid: lines[i] for i, (rid, _) in enumerate(entries, start=1)}
            made = (derive(json.loads(line)) for line in self._lines.values())
            derived = tuple(d for d in made if d is not None)
        self._derived = {d["id"]: d for d in derived}
        self.global_allow = Allowlist(
            {"regexes": allow["regexes"], "stopwords": allow["stopwords"]}
        )
        self.ids: tuple[str, ...] = tuple(rid for rid, _ in entries)
        self.by_keyword: dict[str, tuple[str, ...]] = {}
        for rid, keywords in (*entries, *((d["id"], tuple(d["keywords"])) for d in derived)):
            for k in keywords:
                self.by_keyword[k] = (*self.by_keyword.get(k, ()), rid)
        self.always: tuple[str, ...] = tuple(rid for rid, kw in entries if not kw)
        self._rules: dict[str, Rule] = {}

    @cached_property
    def _header(self) -> dict[str, Any]:
        with open(self.path, encoding="utf-8") as f:
            header: dict[str, Any] = json.loads(f.readline())
        return header

    @property
    def source(self) -> dict[str, Any]:
        """Where the rules came from: name, url, tag, commit, sha256 of gitleaks.toml,
        licence."""
        source: dict[str, Any] = self._header["source"]
        return source

    @property
    def dropped(self) -> list[dict[str, str]]:
        """gitleaks rules the conversion left out, with the reason."""
        dropped: list[dict[str, str]] = self._header.get("dropped", [])
        return dropped

    @cached_property
    def gate(self) -> KeywordGate:
        """Every keyword of every rule, found in one pass."""
        return KeywordGate(self.by_keyword)

    def rule(self, rule_id: str) -> Rule:
        """The rule ``rule_id`` (parsed the first time it is asked for)."""
        rule = self._rules.get(rule_id)
        if rule is None and rule_id in self._derived:
            rule = self._rules[rule_id] = Rule(self._derived[rule_id], self.global_allow)
        if rule is None:
            raw = json.loads(self._line(rule_id))
            if raw.get("id") != rule_id:
                raise ValueError(f"{self.path}: the rule at {rule_id}'s place is {raw.get('id')}")
            rule = self._rules[rule_id] = Rule(raw, self.global_allow)
        return rule

    def _line(self, rule_id: str) -> str:
        line = self._lines.get(rule_id)
        if line is None:
            offset, length = self._offsets[rule_id]
            fd = os.open(self.path, os.O_RDONLY)
            try:
                line = os.pread(fd, length, offset).decode("utf-8")
            finally:
                os.close(fd)
        return line

    def find(self, text: str, low: str) -> list[Finding]:
        """Every secret in ``text`` (``low``: :func:`lower_aligned` of it), memwork's way."""
        hits = self.gate.hits(low)
        if not hits and not self.always:
            return []
        positions: dict[str, list[int]] = {rid: [] for rid in self.always}
        for keyword, at in hits.items():
            for rid in self.by_keyword[keyword]:
                positions.setdefault(rid, []).extend(at)
        out: list[Finding] = []
        for rid, at in positions.items():
            out.extend(self.find_rule(self.rule(rid), text, low, at))
        return out

    def find_rule(self, rule: Rule, text: str, low: str, at: list[int]) -> list[Finding]:
        """What one rule finds, given where the gate found its keywords (``at``)."""
        if rule.anchor == "keywords":
            viable = rule.viable(text, low, sorted(set(at)))
            return rule.scan_at(text, viable) if viable else []
        if rule.anchor == "literals":
            starts: set[int] = set()
            for literal in rule.anchor_literals:
                i = low.find(literal)
                while i >= 0:
                    starts.add(i)
                    i = low.find(literal, i + 1)
            viable = rule.viable(text, low, sorted(starts))
            return rule.scan_at(text, viable) if viable else []
        return rule.scan_all(text)


_RULES: RuleSet | None = None


def rule_set() -> RuleSet:
    """The shipped rule set (read on first use)."""
    global _RULES
    if _RULES is None:
        _RULES = RuleSet()
    return _RULES
