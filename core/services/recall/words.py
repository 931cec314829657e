"""Words as recall sees them: lower case, stop words out, Snowball English stems.

A record and a query pass the same function, so "deploying", "deployed" and
"deploys" all meet at ``deploy``. The stop list is Lucene's English list plus
the words a question is made of ("when", "did", "what", "you", "my"): in an
agent's question they carry no subject, and counting them as terms ranks
records by how chatty they are (the evaluation in docs/RECALL.md measures it).
Words are runs of letters and digits in any script; one letter alone is
dropped, one digit kept ("5" in "step 5"). Stems are memoised: a store's
vocabulary is small next to its word count.
"""

from __future__ import annotations

import re

import Stemmer

#: Lucene's English stop words, then question words, auxiliaries and pronouns.
STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their
    then there these they this to was will with
    about above after again against all am any because been before being below between both
    can could did do does doing down during each few from further had has have having he her
    here hers herself him himself his how i its itself just me more most my myself nor now off
    once only other our ours ourselves out over own same she should so some than theirs them
    themselves those through too under until up very we were what when where which while who
    whom why would you your yours yourself yourselves s t d ll m re ve y also ever kind""".split()
)

_WORD = re.compile(r"[^\W_]+")
_STEMMER = Stemmer.Stemmer("english")
_MEMO: dict[str, str] = {}
_MEMO_MAX = 200_000


def words(text: str) -> list[str]:
    """The content words of ``text``, lower case, unstemmed, in order."""
    return [
        w
        for w in _WORD.findall(text.lower())
        if w not in STOP_WORDS and (len(w) > 1 or w.isdigit())
    ]


def stem(word: str) -> str:
    """The Snowball English stem of one lower-case word."""
    found = _MEMO.get(word)
    if found is None:
        found = _STEMMER.stemWord(word)
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
            found = stem(w)
        out.append(found)
    return out
