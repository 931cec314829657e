"""Esc and the key after it, typed in one burst, are read as the two keys they were.

A terminal sends Escape as the byte ESC and Alt+key as ESC followed by the key.
When Escape and the next key reach the app in the same read (a quick hand, one
SSH packet, a paste of keys), Textual's parser cannot tell them apart from an
Alt chord: ``Esc 7`` became Alt+7 (typed as "¶", the character some macOS
terminals send for Option+7) and ``Esc a`` became Alt+a. The workbench binds no
Alt chords, so the burst is always the two keys the user pressed: Escape, then
the key. :class:`BurstParser` reads it that way; :func:`install` makes the
driver the app runs on use it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from textual import events
from textual._xterm_parser import XTermParser  # noqa: PLC2701 - the parser the drivers use
from textual.driver import Driver

__all__ = ["BurstParser", "install"]

ESC = "\x1b"
#: After ESC these start a longer sequence (CSI, SS3, OSC, DCS, APC, PM, ST): left to
#: Textual's parser. Typed after Escape they still split, once the parser's wait for
#: the rest of a sequence times out (the Alt branch below).
SEQUENCE_STARTS = frozenset("[O]P_^\\")


class BurstParser(XTermParser):
    """Textual's terminal parser, but ESC + one printable key is Escape, then the key."""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if alt and len(sequence) == 1 and sequence.isprintable():
            # An ESC the parser held back until a timeout, then took for Alt.
            yield events.Key("escape", ESC)
            yield from super()._sequence_to_key_events(sequence)
            return
        if (
            len(sequence) == 2
            and sequence[0] == ESC
            and sequence[1].isprintable()
            and sequence[1] not in SEQUENCE_STARTS
        ):
            yield events.Key("escape", ESC)
            yield from super()._sequence_to_key_events(sequence[1])
            return
        yield from super()._sequence_to_key_events(sequence)


def install(driver_class: type[Driver]) -> type[Driver]:
    """Make ``driver_class`` read keys with :class:`BurstParser` (the drivers build
    their parser from the name their module imported) and return it."""
    module = sys.modules.get(driver_class.__module__)
    if module is not None and getattr(module, "XTermParser", None) is XTermParser:
        module.XTermParser = BurstParser  # type: ignore[attr-defined]
    return driver_class
