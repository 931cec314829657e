"""Polarity of a wording: does it say to do something, or not to?

Fuzzy similarity cannot tell "Always run the tests before deploying" from
"Never run the tests before deploying" (they score 94), yet one is the
other's negation. This module reads the negators and where they stand, so
near-duplicate detection can keep such pairs apart (and curation can flag
them as contradicting). Plain functions of text, no store, no fuzzy library.

How a text is read:

- normalised: lower case, typographic apostrophes made plain, contractions
  spelled out (``don't`` → ``do not``, ``can't`` → ``can not``, ``won't`` →
  ``will not``, ``isn't`` → ``is not``…);
- split into clauses at ``, ; : . ! ?`` (a dot or colon inside a word such as
  ``setup.py`` or ``host:8080`` does not split) and at ``but``, ``unless``,
  ``except``, ``instead``, ``otherwise``, ``although``, ``though``, ``whereas``;
- in each clause the negators are counted: ``not``, ``never``, ``no``,
  ``without``, ``avoid``, ``nor``, ``neither``, ``none``, ``nothing``,
  ``nobody``, ``refrain``, and ``stop`` when a verb in -ing follows it
  (``stop retrying`` negates, ``stop the server`` does not); ``not only``
  is not a negation, and ``neither … nor`` is one. Words that merely contain one (``--no-cache``,
  ``non-root``, ``knot``) are not negators. An odd count negates the clause,
  so "never deploy without tests" is not negated;
- an antonym verb counts as its opposite negated: ``disable`` reads as "not
  enable", ``remove`` as "not add", ``deny`` as "not allow", ``stop the
  server`` as "not start the server" (:data:`ANTONYMS`), so "Disable strict
  mode" negates "Enable strict mode" and "Never disable it" agrees with it;
- ``before`` and ``after`` between two parts of a clause give it an *order*
  (what comes first, what comes next: "A after B" is "B before A"), and the
  two words leave the core;
- ``always``, ``must``, ``should``, ``do`` and the like mark a positive
  instruction: they are dropped from the clause's *core*, the words left
  once polarity markers, auxiliaries and articles are gone.

Two texts contradict when a clause of one and a clause of the other are about
the same thing (their cores share most of their words) and exactly one of them
is negated, or both put the same two things in opposite orders ("Run the
migration before deploying" / "… after deploying", "Check the logs before
restarting" / "Restart before checking the logs"; both at once cancel out). A
clause of one text that the other does not talk about changes nothing: "Retry on
timeout, not on auth errors" refines "Retry on timeout" rather than negating it.
When no clauses pair up, the texts' overall polarity decides."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_IRREGULAR = (
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bshan't\b"), "shall not"),
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"\bain't\b"), "is not"),
)
_NT = re.compile(r"\b([a-z]+)n't\b")
#: Contractions written without the apostrophe, common in quick notes.
_BARE = re.compile(r"\b(do|does|did|is|are|was|were|should|must|would|could|has|have|had|need)nt\b")
_CLAUSE_BREAK = re.compile(r"[,;!?()\[\]]|[.:](?=\s|$)|\s[-–—]+\s")
_CONJUNCTIONS = frozenset(
    {"but", "unless", "except", "instead", "otherwise", "although", "though", "whereas"}
)
_TOKEN = re.compile(r"-*[a-z0-9][a-z0-9_'./@:+-]*")

NEGATORS = frozenset(
    {
        "not",
        "never",
        "no",
        "without",
        "avoid",
        "avoids",
        "avoiding",
        "nor",
        "neither",
        "none",
        "nothing",
        "nobody",
        "refrain",
    }
)
#: Negates only when an -ing verb follows ("stop retrying"), not "stop the server".
_STOP_WORDS = frozenset({"stop", "stops", "stopped"})
#: Words that mark an instruction as positive or carry no content of their own.
POSITIVE_MARKERS = frozenset({"always", "must", "should", "shall", "ever", "please"})
_FILLER = frozenset(
    {
        "do",
        "does",
        "did",
        "will",
        "would",
        "can",
        "could",
        "may",
        "might",
        "need",
        "needs",
        "to",
        "be",
        "is",
        "are",
        "was",
        "were",
        "been",
        "you",
        "we",
        "i",
        "the",
        "a",
        "an",
        "it",
        "any",
        "of",
        "on",
        "in",
        "at",
        "for",
        "by",
        "and",
        "or",
        "so",
        "then",
        "from",
    }
)
#: Antonym verbs: each word on the left reads as the one on the right, negated.
ANTONYMS = {
    "disable": "enable",
    "deny": "allow",
    "disallow": "allow",
    "forbid": "allow",
    "forbidden": "allow",
    "remove": "add",
    "decrease": "increase",
    "stop": "start",
    "exclude": "include",
    "hide": "show",
    "reject": "accept",
    "uninstall": "install",
    "disconnect": "connect",
    "downgrade": "upgrade",
    "unlock": "lock",
    "unpin": "pin",
    "decrypt": "encrypt",
    "close": "open",
    "lower": "raise",
    "revoke": "grant",
    "collapse": "expand",
    "unset": "set",
    "unmount": "mount",
    "unsubscribe": "subscribe",
}
#: Words that order two parts of a clause: "A before B"; "A after B" is "B before A".
_ORDER_WORDS = {"before": False, "after": True}
#: Two clause cores are about the same thing when this share of the smaller one's
#: words is in the other.
SAME_SUBJECT = 0.75


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of a text: its content words and whether it is negated."""

    core: frozenset[str]
    """Stems of the words left once negators, polarity markers and fillers are gone."""
    negators: tuple[str, ...]
    """The negators found, in order (antonym verbs among them)."""
    order: tuple[frozenset[str], frozenset[str]] | None = None
    """(what comes first, what comes next) when ``before``/``after`` joins two parts."""
    lead: str = ""
    """The first content word's stem (in an imperative, the action: "pin" in "Pin
    images by digest")."""

    @property
    def negated(self) -> bool:
        """An odd number of negators negates the clause ("never … without" does not)."""
        return len(self.negators) % 2 == 1


def normalise(text: str) -> str:
    """Lower case, plain apostrophes, contractions spelled out, spaces collapsed."""
    value = text.translate(_APOSTROPHES).lower()
    for pattern, replacement in _IRREGULAR:
        value = pattern.sub(replacement, value)
    value = _NT.sub(r"\1 not", value)
    value = _BARE.sub(r"\1 not", value)
    return " ".join(value.split())


#: Irregular past forms of verbs agents use when they report a mistake ("Ran the
#: migration without a backup", "Forgot the tag"): a derived ``[AVOID]`` rule keeps
#: the past tense, a lesson says the same thing in the imperative ("Run …", "Forget …").
_PAST = {
    "ran": "run", "reran": "rerun", "wrote": "write", "written": "write",
    "rewrote": "rewrite", "rewritten": "rewrite", "overwrote": "overwrite",
    "overwritten": "overwrite", "forgot": "forget", "forgotten": "forget",
    "took": "take", "taken": "take", "broke": "break", "broken": "break",
    "built": "build", "rebuilt": "rebuild", "sent": "send", "kept": "keep",
    "made": "make", "gave": "give", "given": "give", "went": "go", "gone": "go",
    "got": "get", "gotten": "get", "lost": "lose", "left": "leave", "hid": "hide",
    "hidden": "hide", "chose": "choose", "chosen": "choose", "began": "begin",
    "begun": "begin", "brought": "bring", "caught": "catch", "threw": "throw",
    "thrown": "throw", "froze": "freeze", "frozen": "freeze", "drove": "drive",
    "driven": "drive", "spent": "spend", "held": "hold", "told": "tell",
    "did": "do", "done": "do", "saw": "see", "seen": "see", "shut": "shut",
}  # fmt: skip


def _stem(word: str) -> str:
    """A crude stem, enough to pair "retry"/"retries"/"retrying" and "test"/"tests"."""
    word = word.strip("'.:@+-_/")
    if word in _PAST:
        return _no_final_e(_PAST[word])
    for suffix, keep in (
        ("ies", "y"),
        ("ing", ""),
        ("ied", "y"),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)] + keep
            # "skipped", "stopping", "committed": the doubled consonant goes, so they
            # meet "skip", "stop", "commit" ("passed", "called" and "added" keep theirs).
            if (
                suffix in ("ed", "ing")
                and len(stem) >= 4
                and stem[-1] == stem[-2]
                and stem[-1] not in "aeiouslz"
            ):
                stem = stem[:-1]
            return _no_final_e(stem)
    return _no_final_e(word)


def _no_final_e(stem: str) -> str:
    """ "stage"/"stages", "silence"/"silenced", "cache"/"cached" meet without their e."""
    return stem[:-1] if len(stem) >= 4 and stem.endswith("e") else stem


def _antonym_stems() -> dict[str, str]:
    return {_stem(word): _stem(opposite) for word, opposite in ANTONYMS.items()}


_ANTONYM_STEMS: dict[str, str] = {}


def _clause(tokens: list[str]) -> Clause | None:
    if not _ANTONYM_STEMS:
        _ANTONYM_STEMS.update(_antonym_stems())
    negators: list[str] = []
    core: set[str] = set()
    parts: list[set[str]] = [set()]
    swapped = False
    lead = ""
    for position, token in enumerate(tokens):
        following = tokens[position + 1] if position + 1 < len(tokens) else ""
        if token == "not" and following == "only":
            continue  # "not only X but also Y" affirms X
        if token == "nor" and "neither" in negators:
            continue  # "neither X nor Y" is one negation
        if token in NEGATORS or (token in _STOP_WORDS and following.endswith("ing")):
            negators.append(token)
            continue
        if token in _ORDER_WORDS and len(parts) == 1 and parts[0]:
            swapped = _ORDER_WORDS[token]
            parts.append(set())
            continue
        if token in POSITIVE_MARKERS or token in _FILLER:
            continue
        stem = _stem(token)
        if stem in _ANTONYM_STEMS:
            negators.append(token)
            stem = _ANTONYM_STEMS[stem]
        if stem:
            lead = lead or stem
            core.add(stem)
            parts[-1].add(stem)
    if not core and not negators:
        return None
    order = None
    if len(parts) == 2 and parts[1]:
        first, then = frozenset(parts[0]), frozenset(parts[1])
        order = (then, first) if swapped else (first, then)
    elif len(parts) == 2:
        core.add(_stem("after" if swapped else "before"))  # "do it before": no second part
    return Clause(frozenset(core), tuple(negators), order, lead)


def clauses(text: str) -> list[Clause]:
    """The clauses of ``text`` in order, each with its core and its negators."""
    found: list[Clause] = []
    for part in _CLAUSE_BREAK.split(normalise(text)):
        words = _TOKEN.findall(part)
        # "Pin images by digest, not by tag": a part that opens on "not" is a contrast
        # with the clause before it, and says not to do *that action* that way. Alone,
        # its core ("tag") would meet every lesson that mentions a tag.
        contrast = bool(found) and words[:1] == ["not"] and words[1:2] != ["only"]
        tokens: list[str] = []
        for token in words:
            if token in _CONJUNCTIONS:
                if (clause := _clause(tokens)) is not None:
                    found.append(clause)
                tokens = []
                contrast = False
            else:
                tokens.append(token)
        if (clause := _clause(tokens)) is not None:
            if contrast and found[-1].lead:
                clause = replace(clause, core=clause.core | {found[-1].lead})
            found.append(clause)
    return found


def is_negated(text: str) -> bool:
    """Whether ``text`` as a whole says *not* to: its first clause with content decides
    ("Never X", "Don't X", "Avoid X", "X? No, without Y" …)."""
    return says_not(clauses(text))


def says_not(parsed: list[Clause]) -> bool:
    """:func:`is_negated` of a text already split into its clauses."""
    return next((clause.negated for clause in parsed if clause.core), False)


def same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two clause cores are about the same thing (see :data:`SAME_SUBJECT`)."""
    if not a or not b:
        return False
    shared = len(a & b)
    return shared >= 1 and shared / min(len(a), len(b)) >= SAME_SUBJECT


def reversed_order(x: Clause, y: Clause) -> bool:
    """Whether two clauses put the same two things in opposite orders."""
    if x.order is None or y.order is None:
        return False
    (x_first, x_then), (y_first, y_then) = x.order, y.order
    return same_subject(x_first, y_then) and same_subject(x_then, y_first)


def oppose(x: Clause, y: Clause) -> bool:
    """Whether two clauses about the same thing say opposite things: exactly one is
    negated, or they order the same two things oppositely (both at once cancel out)."""
    return (x.negated != y.negated) != reversed_order(x, y)


def opposed(a: str, b: str) -> bool:
    """Whether some clause of ``a`` and some clause of ``b`` are about the same thing
    and exactly one of them is negated.

    Stricter than :func:`contradicts`, which falls back on the texts' overall
    polarity when no clauses pair up (it is meant for texts already known to be
    similar): here texts that share no subject never oppose, so it can compare
    texts worded differently, such as a derived ``[AVOID]`` rule and a lesson.
    """
    return any(oppose(x, y) for x in clauses(a) for y in clauses(b) if same_subject(x.core, y.core))


def contradicts(a: str, b: str) -> bool:
    """Whether one text negates the other ("Always X" / "Never X", "X" / "Don't X").

    Meant for texts already known to be similar: it answers whether they say
    opposite things about what they share, not whether they share anything.
    """
    first, second = clauses(a), clauses(b)
    paired = False
    for x in first:
        for y in second:
            if same_subject(x.core, y.core):
                if oppose(x, y):
                    return True
                paired = True
    if paired:
        return False
    return is_negated(a) != is_negated(b)
