"""Convert gitleaks' default rule set (config/gitleaks.toml) into memwork's data file.

    python scripts/gitleaks/convert.py SRC_TOML OUT_JSONL [--tag T --commit C]

(``refresh.py`` runs this on a tag of a gitleaks checkout; use it directly only to try a
toml by hand.) Every Go (RE2) pattern is translated to Python ``re`` (:mod:`re2py`),
compiled with ``re.ASCII`` to prove it is valid, and given a scanning plan
(:mod:`scanplan`). The output is JSON Lines, read by ``core/privacy/gitleaks.py``:

- line 1, the header: ``format``, ``source`` (name, url, tag, commit, sha256 of the toml,
  licence, minVersion), the global ``allowlist`` (regexes, stopwords), ``index`` (one
  ``[id, keywords]`` pair per rule, in the order of the lines that follow) and ``dropped``
  (rules that cannot apply to free text, with the reason);
- one line per rule: ``id``, ``description``, ``regex`` (Python, gitleaks' semantics),
  ``go_regex`` (as gitleaks writes it), ``translations`` (what had to change), ``keywords``
  (lower case: the gate), ``entropy``, ``secret_group``, ``redact`` (``secret`` or
  ``match``), ``path``, ``allowlists`` and ``plan`` (see :mod:`scanplan`).

A reader needs only the header to build its keyword gate, and parses a rule's line the
first time one of that rule's keywords occurs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tomllib
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from re2py import FLAGS, Untranslatable, translate  # noqa: E402
from scanplan import plan as scan_plan  # noqa: E402

FORMAT = 1


def _compiles_as_is(src: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            re.compile(src, FLAGS)
            return True
        except (re.error, FutureWarning, DeprecationWarning):
            return False


def _py(src: str, stats: dict[str, int], notes_out: list[str]) -> str:
    py, notes = translate(src)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        re.compile(py, FLAGS)  # raises if the translation is not valid Python
    real = [n for n in notes if not n.startswith("$")]
    notes_out.extend(n for n in notes if n not in notes_out)
    if _compiles_as_is(src) and not real:
        stats["unchanged"] += 1
    else:
        stats["translated"] += 1
    return py


def _allowlist(a: dict[str, Any], stats: dict[str, int], notes: list[str]) -> dict[str, Any]:
    return {
        "description": a.get("description", ""),
        "target": a.get("regexTarget", "secret"),
        "condition": a.get("condition", "OR").upper(),
        "regexes": [_py(r, stats, notes) for r in a.get("regexes", [])],
        "stopwords": [s.lower() for s in a.get("stopwords", [])],
        # A path or commit condition cannot hold for free text (there is no file): an
        # AND allowlist with one never applies, an OR one applies through its other parts.
        "needs_path": bool(a.get("paths") or a.get("commits")),
    }


def convert(src: bytes, meta: dict[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, stats)``: data is ``{"header": {...}, "rules": [...]}``."""
    cfg = tomllib.loads(src.decode())
    rule_stats = {"unchanged": 0, "translated": 0, "failed": 0}
    allow_stats = {"unchanged": 0, "translated": 0, "failed": 0}
    notes_count: dict[str, int] = {}
    rules: list[dict[str, Any]] = []
    dropped: list[dict[str, str]] = []
    for r in cfg["rules"]:
        rid = r["id"]
        if "regex" not in r:
            dropped.append({"id": rid, "reason": "path-only rule (no regex): needs a file name"})
            continue
        notes: list[str] = []
        try:
            sub = {"unchanged": 0, "translated": 0}
            pattern = _py(r["regex"], sub, notes)
            rule_stats["unchanged" if sub["unchanged"] else "translated"] += 1
            allowlists = [_allowlist(a, allow_stats, notes) for a in r.get("allowlists", [])]
        except (Untranslatable, re.error, FutureWarning) as e:
            rule_stats["failed"] += 1
            dropped.append({"id": rid, "reason": f"untranslatable: {e}"})
            continue
        # A pattern whose only groups are named (jwt-base64: one group per JWT header name)
        # has no secret group: gitleaks would report the first named piece (10 characters)
        # as the secret. memwork redacts the whole match for such rules.
        named_only = bool(re.search(r"\(\?P<", pattern)) and not re.search(r"\((?!\?)", pattern)
        redact = "match" if named_only and not r.get("secretGroup") else "secret"
        for n_ in notes:
            notes_count[n_] = notes_count.get(n_, 0) + 1
        keywords = sorted({k.lower() for k in r.get("keywords", [])})
        rules.append(
            {
                "id": rid,
                "description": r.get("description", ""),
                "regex": pattern,
                "go_regex": r["regex"],
                "translations": notes,
                "keywords": keywords,
                "entropy": float(r.get("entropy", 0.0)),
                "secret_group": int(r.get("secretGroup", 0)),
                "redact": redact,
                "path": r.get("path"),
                "allowlists": allowlists,
                "plan": scan_plan(pattern, keywords),
            }
        )
    g = cfg.get("allowlist", {})
    gnotes: list[str] = []
    header = {
        "format": FORMAT,
        "source": {
            "name": "gitleaks default config (config/gitleaks.toml)",
            "url": "https://github.com/gitleaks/gitleaks",
            **meta,
            "sha256": hashlib.sha256(src).hexdigest(),
            "min_version": cfg.get("minVersion"),
        },
        "converted_by": "scripts/gitleaks/refresh.py",
        "allowlist": {
            "regexes": [_py(x, allow_stats, gnotes) for x in g.get("regexes", [])],
            "stopwords": [s.lower() for s in g.get("stopwords", [])],
            "translations": gnotes,
        },
        "index": [[r["id"], r["keywords"]] for r in rules],
        "dropped": dropped,
    }
    stats = {
        "rules_in_source": len(cfg["rules"]),
        "rules_converted": len(rules),
        "rule_regexes": rule_stats,
        "allowlist_regexes": allow_stats,
        "translation_notes": dict(sorted(notes_count.items(), key=lambda kv: -kv[1])),
        "global_allowlist_translations": gnotes,
        "dropped": dropped,
    }
    return {"header": header, "rules": rules}, stats


def write_jsonl(data: dict[str, Any], out: Path) -> None:
    """The header line, then one line per rule (sorted keys, so a refresh diffs well)."""
    lines = [json.dumps(data["header"], ensure_ascii=False, sort_keys=True)]
    lines += [json.dumps(r, ensure_ascii=False, sort_keys=True) for r in data["rules"]]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--tag", default="")
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    meta = {"tag": a.tag, "commit": a.commit, "license": "MIT"}
    data, stats = convert(Path(a.src).read_bytes(), meta)
    write_jsonl(data, Path(a.out))
    print(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
