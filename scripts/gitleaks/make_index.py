"""Write ``core/privacy/gitleaks_index.py``: what the scrubber needs to start, taken from
the rule data file, so that a fresh process does not read and parse the whole file.

    python scripts/gitleaks/make_index.py [--check]

``refresh.py`` runs it after writing new rules, and so does ``make generate``; a test
fails when the index and the data file disagree. ``--check`` exits 1 when the written
index differs from what this script would write.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "core/privacy/data/gitleaks_rules.jsonl"
OUT = ROOT / "core/privacy/gitleaks_index.py"


def _prefixed() -> Any:
    """``core/privacy/prefixed.py``, loaded by its path (it imports nothing of memwork's)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("prefixed", ROOT / "core/privacy/prefixed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def index_source(data: bytes) -> str:
    """The index module for the rule data ``data`` (the bytes of the JSONL file)."""
    lines = data.split(b"\n")
    header: dict[str, Any] = json.loads(lines[0])
    offsets: dict[str, tuple[int, int]] = {}
    derived: list[dict[str, Any]] = []
    derive = _prefixed().derive
    at = len(lines[0]) + 1
    for line in lines[1:]:
        if line.strip():
            raw = json.loads(line)
            offsets[raw["id"]] = (at, len(line))
            found = derive(raw)
            if found is not None:
                derived.append(found)
        at += len(line) + 1
    index = [(rid, tuple(keywords)) for rid, keywords in header["index"]]
    if [rid for rid, _ in index] != list(offsets):
        raise SystemExit("the header's index and the rule lines name different rules")
    allow = header["allowlist"]
    parts = [
        '"""What the scrubber needs to start: the rule set\'s index, from',
        "``data/gitleaks_rules.jsonl``. Made by ``scripts/gitleaks/make_index.py``; do not",
        'edit (a test compares it with the data file)."""',
        "",
        "# ruff: noqa: E501 - gitleaks' patterns are long",
        f"DATA_SIZE = {len(data)}",
        f"DATA_SHA256 = {hashlib.sha256(data).hexdigest()!r}",
        *_tuple("ALLOW_REGEXES", allow["regexes"]),
        *_tuple("ALLOW_STOPWORDS", allow["stopwords"]),
        "#: (rule id, its keywords), in the file's order.",
        *_tuple("INDEX", index),
        "#: Where each rule's line is in the file: (byte offset, length).",
        "LINES = {",
        *(f"    {rid!r}: {span!r}," for rid, span in offsets.items()),
        "}",
        "#: Rules that find a token by its vendor prefix alone (core/privacy/prefixed.py).",
        *_tuple("PREFIXED", derived),
        "",
    ]
    return "\n".join(parts)


def _tuple(name: str, items: list[Any]) -> list[str]:
    return [f"{name} = (", *(f"    {item!r}," for item in items), ")"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that the index is current")
    a = ap.parse_args()
    text = index_source(DATA.read_bytes())
    if a.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            sys.exit(f"{OUT.relative_to(ROOT)} is out of date: run {Path(__file__).name}")
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
