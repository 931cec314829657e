"""A noun and the verb or adjective it is made from, read as one word.

"When did I get married" and "our marriage", "what did I decide" and "my decision",
"how much did I pay" and "the payment": Snowball cuts endings but leaves *marriag* and
*marri*, *decis* and *decid*, *payment* and *pay* apart. Each noun's stem here stands
for its word's stem, in records and questions alike, so every form of either meets
(*marriages*, *married*, *marrying*). A list rather than a rule: cutting every *-ment*
would make *apartment* an *apart*.
"""

from __future__ import annotations

from collections.abc import Callable

#: The noun, then the word it stands for: one pair a line.
PAIRS = """
marriage marry
failure fail
decision decide
choice choose
success succeed
loss lose
belief believe
growth grow
death die
departure depart
payment pay
proof prove
sale sell
flight fly
pregnancy pregnant
injury injure
advice advise
anxiety anxious
delivery deliver
recovery recover
discovery discover
competition compete
subscription subscribe
description describe
explanation explain
application apply
speech speak
"""


def family_aliases(stem: Callable[[str], str]) -> dict[str, str]:
    """Each noun's stem, the stem of the word it stands for (``stem``: the stemmer's
    function for one word)."""
    aliases: dict[str, str] = {}
    for line in PAIRS.strip().splitlines():
        noun, word = line.split()
        ours, theirs = stem(noun), stem(word)
        if ours != theirs:
            aliases[ours] = theirs
    return aliases
