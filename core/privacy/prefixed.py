"""Vendor tokens whose own prefix marks them, found without the name gitleaks wants.

Several gitleaks rules find a token only after a name that says whose it is:
``new_relic_key = NRAK-…``, ``typeform: tfp_…``, ``dnkey_token = dnkey-…``. The token
itself starts with a prefix the vendor chose to make it recognisable, and gitleaks lists
that prefix among the rule's keywords (``nrak``, ``nrii-``, ``nrjs-``, ``tfp_``,
``dnkey``): written alone (``export KEY=NRAK-…``, ``value: "tfp_…"``, a token pasted in
a note) it would be kept.

:func:`derive` makes, from such a rule, a second rule that finds the token by its prefix
alone: the prefix as the vendor writes it (case kept), the rule's own body (its case
rule kept), the rule's own ends, at a word start, with a digit somewhere in the body (a
token is random; ``live_streaming_configuration…`` is a name). A finding is reported
under the original rule's id. The derived rules are computed from the data file when
the index is made (``scripts/gitleaks/make_index.py``, ``make generate``), so a process
reads none of this at start.
"""

from __future__ import annotations

import re
from typing import Any

#: The shortest prefix that marks a token alone (``b_`` and ``sl`` do not).
PREFIX_MIN = 4
#: The id suffix of a derived rule in the rule set's tables (its findings use the rule's).
SUFFIX = "~prefix"
# A gitleaks rule that wants a name: its identifier prefix, then the token group after
# the assignment run; the token's literal start (letters, digits, - _ and an escaped .).
_NAMED = "(?i)(?:"
_TOKEN = re.compile(r"\[\\x60'\"\\s=\]\{0,5\}\(((?:[A-Za-z0-9_-]|\\[-._])+)")


def _group_end(pattern: str, start: int) -> int:
    """The index of the ``)`` closing the group opened at ``pattern[start]``."""
    depth, i = 0, start
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i += 2 if pattern[i + 1 : i + 2] == "]" else 1
            while pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"unbalanced group at {start}")


def derive(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The rule that finds ``raw``'s token by its prefix alone, as a data-file rule (id
    ``<id>~prefix``, ``kind`` the rule's id); None when ``raw`` needs no such rule (it
    finds its token alone already) or its token has no prefix that marks it."""
    scan: str = raw["plan"]["scan"]
    if not scan.startswith(_NAMED):
        return None
    m = _TOKEN.search(scan)
    if m is None:
        return None
    literal = m.group(1)
    prefix = literal.replace("\\", "")
    keywords = [k for k in raw.get("keywords", ()) if len(k) >= PREFIX_MIN]
    if len(prefix) < PREFIX_MIN or not any(prefix.lower().startswith(k) for k in keywords):
        return None
    opened = m.start(1) - 1
    closed = _group_end(scan, opened)
    body = scan[m.end(1) : closed]
    ends = scan[closed + 1 :]
    pattern = f"(?<![\\w.-])({literal}(?=[\\w.=-]*?[0-9])(?i:{body})){ends}"
    return {
        "id": raw["id"] + SUFFIX,
        "kind": raw["id"],
        "description": f"{raw['id']}, written without a name: its prefix {prefix} alone",
        "regex": pattern,
        "keywords": [prefix.lower()],
        "entropy": raw.get("entropy") or 0.0,
        "secret_group": 1,
        "redact": "secret",
        "allowlists": raw.get("allowlists", []),
        "plan": {
            "anchor": "keywords",
            "anchored": True,
            "anchor_literals": [],
            "prefix_stripped": False,
            "quick": [prefix.lower()],
            "scan": pattern[len("(?<![\\w.-])") :],
            "word_start": True,
        },
    }
