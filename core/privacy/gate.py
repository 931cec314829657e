"""The keyword gate: every place any rule's keyword occurs, found in one pass.

Most text holds no secret, and every rule of the rule set has keywords (``glpat-``,
``hf_``, ``xoxb``, ``password``...) without which it cannot match. One pass over the
lower-cased text finds every occurrence of every keyword; only the rules owning a found
keyword run, at the places it was found. So clean text costs one automaton pass, however
many rules there are.

The pass is an Aho-Corasick automaton (`pyahocorasick
<https://github.com/WojciechMula/pyahocorasick>`_, BSD-3, a C extension with wheels for
every platform memwork supports). Where it cannot be imported, one regular expression
shaped like a trie of the keywords does the same in pure ``re`` (about 1.3x slower on
long text): both give the same positions, which the tests check.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias, cast

if TYPE_CHECKING:  # Protocol classes cost the context path their creation at import
    from collections.abc import Iterator
    from typing import Protocol

    class _Automaton(Protocol):
        """The part of ``ahocorasick.Automaton`` the gate uses (the module ships no types)."""

        def add_word(self, key: str, value: str) -> bool: ...
        def make_automaton(self) -> None: ...
        def iter(self, text: str) -> Iterator[tuple[int, str]]: ...

    class _AhoModule(Protocol):
        def Automaton(self) -> _Automaton: ...  # noqa: N802 - the library's class name


__all__ = ["KeywordGate", "aho_available"]


def _aho() -> _AhoModule | None:
    try:
        return cast("_AhoModule", importlib.import_module("ahocorasick"))
    except ImportError:
        return None


def aho_available() -> bool:
    """Whether the C automaton can be used here."""
    return _aho() is not None


_Trie: TypeAlias = "dict[str, _Trie]"


def trie_pattern(words: Iterable[str]) -> str:
    """One regex for ``words``: common prefixes factored out, so at each position the
    engine follows one branch and takes the longest word that starts there."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: _Trie) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(trie)


class KeywordGate:
    """Finds every occurrence of a fixed set of lower-case keywords."""

    def __init__(self, words: Iterable[str], *, use_aho: bool | None = None) -> None:
        self.words: tuple[str, ...] = tuple(sorted(set(words)))
        module = _aho() if use_aho is not False else None
        if use_aho and module is None:
            raise ImportError("pyahocorasick is not installed")
        self._automaton: _Automaton | None = None
        self._trie: re.Pattern[str] | None = None
        if module is not None:
            automaton = module.Automaton()
            for word in self.words:
                automaton.add_word(word, word)
            automaton.make_automaton()
            self._automaton = automaton
        else:
            # In a lookahead, so occurrences that overlap ("sk" in "ask-key") all count.
            self._trie = re.compile(f"(?=({trie_pattern(self.words)}))")
            # The regex reports the longest word at a position; shorter words that start
            # there are its prefixes.
            self._prefixes = {
                w: tuple(k for k in self.words if k != w and w.startswith(k)) for w in self.words
            }

    @property
    def kind(self) -> str:
        """``aho`` or ``trie``: which implementation runs."""
        return "aho" if self._automaton is not None else "trie"

    def hits(self, low: str) -> dict[str, list[int]]:
        """Keyword → the positions where it starts in ``low`` (lower-cased text)."""
        found: dict[str, list[int]] = {}
        if self._automaton is not None:
            for end, word in self._automaton.iter(low):
                found.setdefault(word, []).append(end - len(word) + 1)
            return found
        assert self._trie is not None
        for m in self._trie.finditer(low):
            word, at = m.group(1), m.start()
            found.setdefault(word, []).append(at)
            for shorter in self._prefixes[word]:
                found.setdefault(shorter, []).append(at)
        return found
