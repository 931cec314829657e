"""Everyday words that name the same thing, read as one of them.

A memory says "I bought a 20-pound bag" and the question asks "what did I purchase";
one says "my mom's birthday" and the question asks about "my mother". The two share no
stem, so BM25 cannot see they are one. Each word here stands for the word after it, in
the index and in the question alike (a substitution, as British spellings are: no
extra term, no cost at search time), so both meet at one term.

Only pairs that mean the same in nearly every sentence of everyday English, not words
that overlap in part ("big" and "large", "job" and "work"), nor one whose other sense is
common in chat ("kid", as in "just kidding"; "flat", "present"). Kinds and their members
(*doctor* and *dentist*) are :mod:`.categories`, which lends members at half weight
one way only; these are read as the same word both ways.
"""

from __future__ import annotations

#: A word, then the word it stands for.
PAIRS = """
purchase buy  begin start  movie film  photograph photo  pic photo
mom mother  mum mother  mommy mother  dad father  daddy father
grandma grandmother  granny grandmother  grandpa grandfather
couch sofa  fridge refrigerator  bike bicycle  tv television
attorney lawyer  hubby husband  airplane plane
"""
