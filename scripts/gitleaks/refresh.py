"""Refresh memwork's pinned copy of gitleaks' rule set, and the test samples made from it.

    python scripts/gitleaks/refresh.py --gitleaks PATH [--ref v8.30.1] [--seed 1]

PATH is a gitleaks git checkout (or a bare git directory, such as a mirror) and ``--ref`` a
tag or commit in it (default: the newest ``v*`` tag). Nothing is fetched: memwork's CI
cannot reach GitHub, so the converted rules are committed and never downloaded at run
time. Get a checkout however your machine can (``git clone
https://github.com/gitleaks/gitleaks``). The sample extraction draws random strings from
regexes with ``rstr`` (``pip install rstr``; only this script needs it).

Writes, from the repository root:

- ``core/privacy/data/gitleaks_rules.jsonl``: the converted rules (:mod:`convert`), with
  the tag, commit and sha256 of ``config/gitleaks.toml`` they came from;
- ``core/privacy/data/LICENSE.gitleaks``: gitleaks' MIT licence, shipped beside them;
- ``core/privacy/gitleaks_index.py``: the rules' index (:mod:`make_index`), which the
  scrubber starts from;
- ``tests/data/gitleaks_samples.json.gz``: gitleaks' own true and false positives per
  rule (:mod:`extract_samples`, seeded), gzip-compressed so that push protection and
  secret scanners do not flag thousands of token-shaped test strings in the repository.

Then run ``pytest tests/core/privacy/test_secret_rules.py``: every sample of every rule
must be found by its converted rule and redacted by the scrubber, and no rule may
backtrack on long input.
A rule the tests reject needs a look (a new RE2 construct for :mod:`re2py`, a pattern that
needs a bound in :mod:`scanplan`) before the new data is committed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

RULES_OUT = ROOT / "core/privacy/data/gitleaks_rules.jsonl"
LICENSE_OUT = ROOT / "core/privacy/data/LICENSE.gitleaks"
SAMPLES_OUT = ROOT / "tests/data/gitleaks_samples.json.gz"

# gitleaks' cmd/generate/config/rules/dropbox.go gives these two rules no samples (their
# functions return without utils.Validate): samples are drawn from their own regex, in the
# same templates gitleaks uses for generated samples.
SYNTHESISED = {
    "dropbox-long-lived-api-token": r"[a-z0-9]{11}(AAAAAAAAAA)[a-z0-9\-_=]{43}",
    "dropbox-short-lived-api-token": r"sl\.[a-z0-9\-=_]{135}",
}


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args], check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gitleaks", required=True, type=Path, help="a gitleaks checkout")
    ap.add_argument("--ref", default="", help="tag or commit (default: the newest v* tag)")
    ap.add_argument("--seed", type=int, default=1, help="seed for generated samples")
    a = ap.parse_args()
    gitdir = a.gitleaks / ".git" if (a.gitleaks / ".git").exists() else a.gitleaks
    ref = a.ref or git(gitdir, "tag", "--list", "v*", "--sort=-v:refname").split()[0]
    commit = git(gitdir, "rev-parse", f"{ref}^{{commit}}").strip()
    from convert import convert, write_jsonl
    from extract_samples import SAMPLE_TEMPLATES, Generator, extract

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        tar = subprocess.run(
            [
                "git",
                f"--git-dir={gitdir}",
                "archive",
                commit,
                "config/gitleaks.toml",
                "LICENSE",
                "cmd/generate",
            ],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(t)], input=tar, check=True)
        shutil.copy(t / "LICENSE", LICENSE_OUT)
        meta = {"tag": ref, "commit": commit, "license": "MIT (LICENSE.gitleaks)"}
        data, stats = convert((t / "config/gitleaks.toml").read_bytes(), meta)
        write_jsonl(data, RULES_OUT)
        from make_index import OUT, index_source

        OUT.write_text(index_source(RULES_OUT.read_bytes()), encoding="utf-8")
        extracted = extract(t, a.seed)
    gen = Generator(a.seed + 6)
    rules: dict[str, dict[str, list[str]]] = {}
    for rule in data["rules"]:
        found = extracted["rules"].get(rule["id"])
        if found is None and rule["id"] in SYNTHESISED:
            secret = gen(SYNTHESISED[rule["id"]])
            tps = [
                s.replace("{i}", "dropbox").replace("{I}", "DROPBOX").replace("{s}", secret)
                for s in SAMPLE_TEMPLATES
            ]
            found = {"tps": tps, "fps": []}
        if found is None:
            raise SystemExit(f"no samples for rule {rule['id']}: extend extract_samples.py")
        rules[rule["id"]] = {"tps": found["tps"], "fps": found["fps"]}
    samples = {"source": {"tag": ref, "commit": commit}, "seed": a.seed, "rules": rules}
    with gzip.GzipFile(SAMPLES_OUT, "wb", mtime=0) as f:  # mtime=0: same input, same bytes
        f.write(json.dumps(samples, ensure_ascii=False, sort_keys=True).encode())
    print(
        f"gitleaks {ref} ({commit[:12]}): {stats['rules_converted']} rules converted "
        f"({stats['rule_regexes']['translated']} translated, {len(stats['dropped'])} dropped: "
        f"{', '.join(d['id'] for d in stats['dropped'])}); samples for {len(rules)} rules "
        f"({sum(len(r['tps']) for r in rules.values())} true, "
        f"{sum(len(r['fps']) for r in rules.values())} false positives); "
        f"extraction failures: {len(extracted['failures'])}"
    )
    for note, n in stats["translation_notes"].items():
        print(f"  {n:4d} x {note}")


if __name__ == "__main__":
    main()
