"""British and American spellings of one word, read as one.

A note written in British English ("my favourite colour", "organised the catalogue")
and a question in American English ("favorite color", "organize") share no stem:
Snowball cuts "organised" to *organis* and "organize" to *organiz*. Each British stem
here stands for the American one, so every form of the word meets (*colours*,
*coloured* and *colour* all become *color*). An explicit list rather than a rule: a rule
that read every *-ise* as *-ize* would make *promise* and *prom* one word.
"""

from __future__ import annotations

from collections.abc import Callable

#: British, then American: one word each, in the form a stemmer gets them.
PAIRS = """
aeroplane airplane  aluminium aluminum  anaemia anemia  analogue analog  analyse analyze
apologise apologize  armour armor  artefact artifact  authorisation authorization
authorise authorize  behaviour behavior  catalogue catalog  categorise categorize
centre center  colour color  cosy cozy  criticise criticize  customise customize
defence defense  dialogue dialog  doughnut donut  emphasise emphasize
endeavour endeavor  favour favor  favourite favorite  fibre fiber  finalise finalize
flavour flavor  grey gray  harbour harbor  honour honor  humour humor
initialise initialize  jewellery jewelry  judgement judgment  labour labor
licence license  litre liter  localise localize  manoeuvre maneuver  maximise maximize
memorise memorize  metre meter  minimise minimize  modernise modernize  mould mold
moustache mustache  mum mom  neighbour neighbor  neighbourhood neighborhood
normalise normalize  odour odor  offence offense  optimise optimize  organise organize
paediatrician pediatrician  personalise personalize  practise practice
prioritise prioritize  pyjamas pajamas  realise realize  recognise recognize
rumour rumor  sanitise sanitize  savoury savory  sceptical skeptical
serialise serialize  skilful skillful  specialise specialize  stabilise stabilize
standardise standardize  summarise summarize  synchronise synchronize  theatre theater
tokenise tokenize  tumour tumor  utilise utilize  visualise visualize  yoghurt yogurt
"""


def stem_aliases(stem: Callable[[str], str], pairs: str = PAIRS) -> dict[str, str]:
    """Each British word's stem, the American word's stem it stands for (``stem``: the
    stemmer's function for one word); or of any other ``pairs`` written as these are
    (a word, then the word it stands for: :mod:`.shorthand`'s)."""
    words = pairs.split()
    aliases: dict[str, str] = {}
    for ours_word, theirs_word in zip(words[::2], words[1::2], strict=True):
        ours, theirs = stem(ours_word), stem(theirs_word)
        if ours != theirs:
            aliases[ours] = theirs
    return aliases
