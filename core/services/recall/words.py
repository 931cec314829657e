"""Words as recall sees them: lower case, stop words out, Snowball English stems.

A record and a query pass the same function, so "deploying", "deployed" and
"deploys" all meet at ``deploy``. The stop list is Lucene's English list plus
the words a question is made of ("when", "did", "what", "you", "my", the "many" and
"much" of "how many"): in an
agent's question they carry no subject, and counting them as terms ranks
records by how chatty they are (the evaluation in docs/RECALL.md measures it).
Words are runs of letters and digits in any script, with the combining marks
among them (a Hindi vowel sign, a Thai tone mark: see
:mod:`core.services.recall.marks`), read in Unicode's compatibility composed form
(full-width letters and digits as their plain forms); the marks a
writer may leave out (accents on Latin letters, Hebrew points, Arabic vowel marks)
are left out on both sides, so "café" and "cafe" meet (and case is folded, so
"Straße" meets "strasse"). One letter alone is dropped, one digit kept ("5" in
"step 5").

An identifier written in camel case ("parseOrderStatus", "getHTTPResponse") is a word,
followed by its parts ("parse", "order", "status"): an agent's note names the
function, and the question that finds it names what it does ("where do we parse the
order status"). Camel case is a lower-case letter before a capital, or an acronym's
last capital that begins a word ("HTTPServer" is "http" and "server", "IOError" "io"
and "error"); capitals alone ("NASA"), an acronym's plural ("CEOs") and a unit ("GHz")
stay one word. Words joined by underscores, hyphens or dots are parts already. Two
words of letters joined by one hyphen are also the compound they make ("e-mail" is
"mail" and "email", "co-worker" "co", "worker" and "coworker"), so a compound meets
itself written either way; a chain of more ("state-of-the-art") or
a part with a digit ("us-east-1", a date) makes none. The languages named with signs
the words leave out are words of their own: "C++" is "cpp", "C#" "csharp", "F#"
"fsharp", ".NET" "dotnet".

A number written with commas between its thousands ("4,230", "1,000,000") is one
number ("4230"): the question may write it either way. A comma counts as a separator
only after one to three digits that start a number or follow another separator, and
before exactly three digits ("1,2,3" and "1234,567" stay apart).

Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar text is not cut into
words by spaces. Such a run gives each pair of characters side by side as a term
("北京" in "我去了北京"), the way CJK search engines read it; Han, kana and
Hangul also give each character alone, since one character is often a whole word
("猫", a cat). Only the single characters count towards a record's length
(:func:`length_share`): a sentence of thirty Chinese characters is about as long
as one of twenty English words, not twice that. A past tense or plural the stemmer
cannot bring to its word ("bought", "met", "children") is read as that word first
(:mod:`core.services.recall.irregular`), a British spelling as the American one
("colour" as "color", :mod:`core.services.recall.spellings`), a developer's
shorthand as its word ("db" as "database", :mod:`core.services.recall.shorthand`), and
one of two everyday words for one thing as the other ("purchase" as "buy", "mom" as
"mother", :mod:`core.services.recall.synonyms`).
Stems are memoised: a store's vocabulary is small next to its word count.
"""

from __future__ import annotations

import re
import unicodedata

import Stemmer

from ...base.lazy_regex import lazy
from . import shorthand, spellings, synonyms
from .irregular import BASE
from .scripts import IDEOGRAPH, ideograph, scripts_of

#: Lucene's English stop words, then question words, auxiliaries and pronouns.
STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with
    about above after again against all am any because been before being below between both
    can could did do does doing down during each few from further had has have having he her
    here hers herself him himself his how i its itself just me more most my myself nor now off
    once only other our ours ourselves out over own same she should so some than theirs them
    themselves those through too under until up very we were what when where which while who
    whom why would you your yours yourself yourselves s t d ll m re ve y also ever kind
    many much""".split()
)

#: How text is cut into terms (a saved index made another way is built again; 10 was a
#: change taken back, so an index saved under it is built again too).
VERSION = 14

_WORD = re.compile(r"[^\W_]+")
#: A lower-case letter then a capital, or a capital that ends an acronym and begins a
#: word ("HTTPServer", "IOError", "OOMKilled"): what marks camel case. A capital run
#: followed by one lower-case letter is no hump ("CEOs", "GHz", "IPv6" are one word
#: each). Written capital first, so the search runs over the text's few capitals
#: rather than every letter (~4 µs a thousand characters, against ~10).
_HUMP = re.compile(r"[A-Z](?:(?<=[a-z][A-Z])|(?<=[A-Z][A-Z])(?=[a-z]{2}))")
#: The parts of a camel-case identifier: "parseOrderStatus", "getHTTPResponse",
#: "getV2Api"; an acronym's plural is one part ("userIDs": "user", "ids").
_PART = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
#: A comma between a number's thousands: after one to three digits that begin a number
#: (or follow another such comma), before exactly three. Written comma first, so the
#: search runs over the text's commas rather than every character.
_THOUSANDS = re.compile(r",(?:(?<=\b\d,)|(?<=\b\d\d,)|(?<=\b\d\d\d,))(?=\d{3}(?!\d))")
#: The languages whose names are a letter and signs the words leave out: "C++", "C#",
#: "F#", ".NET" (not "example.net"), read as "cpp", "csharp", "fsharp", "dotnet".
_SIGNED = re.compile(r"(?<![\w+#.])(c\+\+|[cf]#|\.net)(?![^\W\d]|[+#])", re.IGNORECASE)
_SIGNED_AS = {"c++": "cpp", "c#": "csharp", "f#": "fsharp", ".net": "dotnet"}
#: "won't", with either apostrophe.
_WONT = re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE)
_STEMMER = Stemmer.Stemmer("english")
#: A British stem, the American one it stands for (:mod:`.spellings`); a short form's,
#: the word's it stands for (:mod:`.shorthand`); an everyday word's, the word for the
#: same thing it is read as (:mod:`.synonyms`).
_ALIASES = {
    **spellings.stem_aliases(_STEMMER.stemWord),
    **spellings.stem_aliases(_STEMMER.stemWord, shorthand.PAIRS),
    **spellings.stem_aliases(_STEMMER.stemWord, synonyms.PAIRS),
}
_MEMO: dict[str, str] = {}
_MEMO_MAX = 200_000

#: A word with its marks (compiled on the first text that is not ASCII: the marks'
#: class costs ~1 ms to compile, which a process reading only ASCII never pays).
_MARKED_WORD = lazy("")
#: Marks a writer may or may not type, left out: accents on Latin, Greek and Cyrillic
#: letters ("café" is found as "cafe"), Hebrew points and Arabic vowel marks.
_OPTIONAL = lazy(
    # Hebrew's points only: its maqaf (a hyphen) and punctuation between them stay.
    "[\u0300-\u036f\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670]"
)


def _marked_word() -> re.Pattern[str]:
    if not _MARKED_WORD.pattern:
        from .marks import char_class

        # One class, underscores in it: a token holding one is split after (rare).
        _MARKED_WORD.pattern = f"[\\w{char_class()}]+"
    return _MARKED_WORD.compiled


def _folded(text: str) -> str:
    """``text`` in Unicode's compatibility composed form (full-width "ＡＰＩ" is "API",
    "ﬁ" is "fi"), without the marks :data:`_OPTIONAL` names."""
    apart = unicodedata.normalize("NFKD", text)
    if _OPTIONAL.search(apart) is not None:
        apart = _OPTIONAL.sub("", apart)
    return unicodedata.normalize("NFKC", apart)


def _keep(word: str, out: list[str]) -> None:
    if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
        out.append(word)


def _cut(token: str, out: list[str]) -> None:
    """A token that is not ASCII: its spaceless runs as pairs (and ideographs alone),
    the rest as words."""
    kinds = scripts_of(token)
    kinds.append(-1)
    start, kind = 0, kinds[0]
    for i in range(1, len(kinds)):
        now = kinds[i]
        if now == kind:
            continue
        part = token[start:i]
        if not kind:
            _keep(part, out)
        else:
            alone = kind == IDEOGRAPH
            if len(part) == 1:
                if alone:
                    out.append(part)
            else:
                for j in range(len(part) - 1):
                    if alone:
                        out.append(part[j])
                    out.append(part[j : j + 2])
                if alone:
                    out.append(part[-1])
        start, kind = i, now


def _identifiers(text: str, ascii_only: bool) -> dict[str, list[str]]:
    """The camel-case identifiers of ``text`` (lower case) and their parts (lower
    case, each kept by the rule every word is): only the words around a hump (see
    ``_HUMP``) are looked at. An identifier is ASCII: a word beside
    an accent typed apart ("A" and a grave, the decomposed "À") is none, as the same
    word typed composed is none."""
    found: dict[str, list[str]] = {}
    read_to = 0  # the end of the last word read: its other humps are in it
    for hump in _HUMP.finditer(text):
        if hump.start() < read_to:
            continue
        start = hump.start() - 1
        while start > read_to and text[start - 1].isalnum():
            start -= 1
        token = _WORD.match(text, start)
        if token is None:  # pragma: no cover - a hump is two letters of a word
            continue
        read_to = token.end()
        word = token.group()
        lowered = word.lower()
        if lowered in found or not word.isascii():
            continue
        if not ascii_only and (
            (start and unicodedata.combining(text[start - 1]))
            or (token.end() < len(text) and unicodedata.combining(text[token.end()]))
        ):
            continue
        parts: list[str] = []
        for part in _PART.findall(word):
            _keep(part.lower(), parts)
        found[lowered] = parts
    return found


#: Past this many identifiers in a text, each word is looked up rather than each
#: identifier searched for (a search per identifier would grow as their product).
_SEARCHED_MOST = 8


def _with_parts(found: list[str], identifiers: dict[str, list[str]]) -> list[str]:
    """``found`` with the parts of each identifier after it: a few identifiers found by
    the list's own search (a long text's words are many), many by a look at each word."""
    if len(identifiers) > _SEARCHED_MOST:
        out: list[str] = []
        for word in found:
            out.append(word)
            parts = identifiers.get(word)
            if parts:
                out += parts
        return out
    at: list[int] = []
    for word in identifiers:
        i = -1
        while True:
            try:
                i = found.index(word, i + 1)
            except ValueError:
                break
            at.append(i)
    if not at:
        return found
    at.sort()
    out = []
    done = 0
    for i in at:
        out += found[done : i + 1]
        out += identifiers[found[i]]
        done = i + 1
    out += found[done:]
    return out


def words(text: str) -> list[str]:
    """The content words of ``text``, lower case, unstemmed, in order (for spaceless
    scripts, the pairs and characters the module docstring describes; a camel-case
    identifier followed by its parts; a number's thousands' commas left out)."""
    if "," in text:
        text = _THOUSANDS.sub("", text)
    lowered = text.lower()
    if "won" in lowered and _WONT.search(lowered) is not None:
        # "won't" would leave "won", read as the past of "win" (see .irregular).
        text = _WONT.sub("will not", text)
        lowered = text.lower()
    if ("+" in text or "#" in text or ".net" in lowered) and _SIGNED.search(text):
        text = _SIGNED.sub(_signed, text)
        lowered = text.lower()
    if "-" in text:
        # "e-mail" is also "email", "co-worker" "coworker": written with the hyphen or
        # without it, a compound meets itself (the parts stay words as before).
        joined = _compounded(text)
        if joined is not text:
            text = joined
            lowered = text.lower()
    ascii_only = lowered.isascii()
    # A text without a capital holds no camel case: no search for one (agents' notes are
    # often all lower case).
    identifiers = _identifiers(text, ascii_only) if lowered != text else {}
    if ascii_only:  # most text: _keep's rule written inline, one call a text
        kept = [
            w for w in _WORD.findall(lowered) if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())
        ]
        return _with_parts(kept, identifiers) if identifiers else kept
    out: list[str] = []
    # casefold() where lower() is not enough: "Straße" meets "strasse".
    for found in _marked_word().findall(_folded(text.casefold())):
        for token in found.split("_") if "_" in found else (found,):
            if not token:
                continue
            if token.isascii():
                _keep(token, out)
            else:
                _cut(token, out)
    return _with_parts(out, identifiers) if identifiers else out


def _signed(found: re.Match[str]) -> str:
    """A language named with signs, followed by its word; as it was after a mark (the
    pattern's look behind sees no word in "é" typed as "e" and an accent)."""
    at = found.start()
    if at and _mark(found.string[at - 1]):
        return found.group()
    alias = _SIGNED_AS.get(found.group().lower())
    return found.group() if alias is None else f"{found.group()} {alias} "


def _mark(char: str) -> bool:
    """Whether ``char`` (not a letter) is a mark on one: a text typed decomposed ("e" and
    an accent) or a Hindi vowel sign. A compound is the same whichever way it is typed."""
    return not char.isascii() and unicodedata.category(char).startswith("M")


def _compounded(text: str) -> str:
    """``text`` with each pair of words of letters joined by one hyphen followed by
    their compound in lower case ("my co-worker" is "my co-worker coworker "); ``text``
    itself when it holds none. Not a pair in a longer chain, nor beside a digit or an
    underscore. A scan from each hyphen: a regular expression looked around every
    character of the text, at a third of the whole cost of cutting it into words."""
    pieces: list[str] = []
    last, end = 0, len(text)
    at = text.find("-")
    while at >= 0:
        start = at
        # Inline: a call per character cost a tenth of cutting an agent's note.
        while start > 0 and ((c := text[start - 1]).isalpha() or _mark(c)):
            start -= 1
        stop = at + 1
        while stop < end and ((c := text[stop]).isalpha() or _mark(c)):
            stop += 1
        if (
            start < at < stop - 1
            and (start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "-_"))
            and (stop == end or not (text[stop].isalnum() or text[stop] in "-_"))
        ):
            pieces += text[last:stop], " ", text[start:at].lower(), text[at + 1 : stop].lower()
            pieces.append(" ")
            last = stop
        at = text.find("-", stop)
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def length_share(term: str) -> bool:
    """Whether ``term`` counts towards a record's length: all but the pairs of
    ideographs, whose characters count once already as terms of their own."""
    return len(term) != 2 or not (ideograph(term[0]) and ideograph(term[1]))


def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word (of its base word, for a form
    the stemmer cannot bring to it: *bought* is *buy*, see :mod:`.irregular`; a British
    spelling's stem is the American one, see :mod:`.spellings`; a short form's, its
    word's, see :mod:`.shorthand`)."""
    found = _MEMO.get(word)
    if found is None:
        found = _STEMMER.stemWord(BASE.get(word, word))
        found = _ALIASES.get(found, found)
        if len(_MEMO) < _MEMO_MAX:
            _MEMO[word] = found
    return found


def terms(text: str) -> list[str]:
    """The stems of ``text``'s content words, in order (what the index holds)."""
    memo = _MEMO
    out = []
    for w in words(text):
        found = memo.get(w)
        if found is None:
            # English stems are for English: a pair of Han characters or a Russian word
            # is kept as it is (and a store's many pairs never fill the memo).
            found = stem(w) if w.isascii() else w
        out.append(found)
    return out
