"""The scrubber against gitleaks' own samples: every rule of the adopted set, in-process.

``tests/data/gitleaks_samples.json.gz`` holds gitleaks' true and false positives for each
of its rules (``scripts/gitleaks/refresh.py`` extracts them from the same tag the rules
come from; gzip-compressed so push protection and secret scanners do not flag the
repository). For every rule:

- the conversion holds: each true positive is found by its rule with gitleaks' own
  semantics (so the secret each sample holds is known), false positives are not;
- the scrubber leaves none of those secrets, as gitleaks writes them, in agent prose, and
  followed by prose punctuation;
- anchored scanning finds what a whole-text search finds, and the pure-``re`` gate what
  the Aho-Corasick gate finds;
- no rule backtracks for long on long adversarial text (Python's ``re`` is not RE2).

Also: the issue's own forms, and the false-positive rate on ordinary developer text.
"""

from __future__ import annotations

import gzip
import json
import re
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from memwork.core.privacy import gitleaks, scrub
from memwork.core.privacy.gate import KeywordGate, aho_available
from memwork.core.privacy.gitleaks import RuleSet, lower_aligned, rule_set

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "tests" / "data" / "gitleaks_samples.json.gz"
DATA = Path(gitleaks.DATA)
ORDINARY = ROOT / "tests" / "data" / "ordinary_text.json"
#: gitleaks' false positives that only a file path rules out (free text has none).
PATH_CONDITIONED = {"freemius-secret-key", "hashicorp-tf-password", "nuget-config-password"}

AGENT_TEMPLATES = [
    "I ran deploy with {x} and it failed with exit code 1.",
    "Found this in the config I was editing:\n{x}\nthen restarted the service.",
    "2026-07-22T10:15:03Z ERROR settings loader: {x}",
    "- step 3: exported the credentials ({x} ) and re-ran the tests",
]
PUNCTUATION = ["The new key is {x}.", "rotate {x}, then retry", "(token {x})", "got {x}: ok"]


def _k(*parts: str) -> str:
    return "".join(parts)  # assembled from pieces: no whole token in this file


@cache
def samples() -> dict[str, Any]:
    with gzip.open(SAMPLES, "rt", encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data


@cache
def expected() -> dict[str, list[tuple[str, list[str]]]]:
    """Rule id → [(sample, the secrets gitleaks' rule reports in it)]."""
    rules = rule_set()
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for rid, found in samples()["rules"].items():
        rule = rules.rule(rid)
        out[rid] = [(tp, sorted({f[3] for f in rule.detect(tp)})) for tp in found["tps"]]
    return out


def _kept(text: str, secrets: list[str]) -> list[str]:
    out = scrub(text)
    return [s for s in secrets if s in out]


# -- the data -----------------------------------------------------------------------------
def test_the_rule_set_is_pinned_licensed_and_complete() -> None:
    header = json.loads(DATA.read_text(encoding="utf-8").split("\n", 1)[0])
    source = header["source"]
    assert source["tag"] == samples()["source"]["tag"]
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert re.fullmatch(r"[0-9a-f]{64}", source["sha256"])
    licence = (DATA.parent / "LICENSE.gitleaks").read_text()
    assert licence.startswith("MIT License") and "Zachary Rice" in licence
    rules = rule_set()
    assert len(rules.ids) >= 200
    # Every rule of the set has samples: the corpus covers the whole adopted set.
    assert set(samples()["rules"]) == set(rules.ids)
    # Only rules that need a file name (no pattern) are left out.
    assert all("path-only" in d["reason"] for d in rules.dropped)


def test_the_shipped_index_describes_the_data_file() -> None:
    # `make generate` writes it; refreshing the rules without it would fail here.
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_index", ROOT / "scripts" / "gitleaks" / "make_index.py"
    )
    assert spec and spec.loader
    make_index = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_index)
    written = (ROOT / "core" / "privacy" / "gitleaks_index.py").read_text(encoding="utf-8")
    assert written == make_index.index_source(DATA.read_bytes())


def _same_rules(a: RuleSet, b: RuleSet) -> None:
    assert a.ids == b.ids and a.by_keyword == b.by_keyword and a.always == b.always
    assert a.global_allow.allows("true", "true", "true")
    assert b.global_allow.allows("true", "true", "true")
    assert (a.global_allow._sources, a.global_allow.stopwords) == (
        b.global_allow._sources,
        b.global_allow.stopwords,
    )
    assert a.source == b.source and a.dropped == b.dropped
    assert a._derived == b._derived  # the prefix-alone rules: from the index, or made here
    for rid in a.ids:
        ra, rb = a.rule(rid), b.rule(rid)
        assert (ra._regex, ra._scan, ra.keywords, ra.entropy, ra.anchor) == (
            rb._regex,
            rb._scan,
            rb.keywords,
            rb.entropy,
            rb.anchor,
        ), rid


def test_the_index_gives_the_rules_the_whole_file_gives(tmp_path: Path) -> None:
    # The shipped file is read through its index (a rule's line at its offset); a copy
    # elsewhere is read whole: both give every rule alike.
    copy = tmp_path / "rules.jsonl"
    copy.write_bytes(DATA.read_bytes())
    indexed, whole = RuleSet(), RuleSet(copy)
    assert indexed._offsets and not indexed._lines
    assert whole._lines and not whole._offsets
    _same_rules(indexed, whole)


def test_a_data_file_the_index_does_not_describe_is_read_whole(monkeypatch) -> None:
    from memwork.core.privacy import gitleaks_index

    indexed = RuleSet()
    monkeypatch.setattr(gitleaks_index, "DATA_SIZE", gitleaks_index.DATA_SIZE + 1)
    stale = RuleSet()
    assert stale._lines and not stale._offsets
    _same_rules(stale, indexed)


def test_the_rule_set_is_the_shipped_file_however_its_path_is_given() -> None:
    assert RuleSet(DATA)._offsets  # a Path to the shipped file uses the index too


def test_a_rule_line_that_is_not_where_the_index_says_is_refused(monkeypatch) -> None:
    rules = RuleSet()
    first, second = rules.ids[:2]
    monkeypatch.setitem(rules._offsets, first, rules._offsets[second])
    with pytest.raises(ValueError, match=first):
        rules.rule(first)


def test_every_rule_compiles_both_ways() -> None:
    rules = rule_set()
    for rid in rules.ids:
        rule = rules.rule(rid)
        assert rule.pattern.pattern and rule.scan.pattern, rid
        assert rule.keywords, rid  # every rule is gated by its keywords


def test_every_sample_is_found_by_its_own_rule() -> None:
    # The conversion from RE2 keeps each rule's meaning: gitleaks' own true positives
    # are found, its false positives are not (but for path conditions free text lacks).
    rules = rule_set()
    missing = [(rid, tp[:60]) for rid, pairs in expected().items() for tp, s in pairs if not s]
    assert missing == []
    wrong = [
        (rid, fp[:60])
        for rid, found in samples()["rules"].items()
        if rid not in PATH_CONDITIONED
        for fp in found["fps"]
        # gitleaks runs a rule only when one of its keywords occurs: so does memwork.
        if any(k in fp.lower() for k in rules.rule(rid).keywords) and rules.rule(rid).detect(fp)
    ]
    assert wrong == []
    assert sum(len(p) for p in expected().values()) >= 6000


# -- recall -------------------------------------------------------------------------------
@pytest.mark.slow
def test_no_rule_keeps_a_secret_as_gitleaks_writes_it() -> None:
    kept = {rid: tp[:80] for rid, pairs in expected().items() for tp, s in pairs if _kept(tp, s)}
    assert kept == {}


@pytest.mark.slow
def test_no_rule_keeps_a_secret_in_agent_prose() -> None:
    kept = {}
    for rid, pairs in expected().items():
        step = max(1, len(pairs) // 3)
        for tp, secrets in pairs[::step][:3]:
            for template in AGENT_TEMPLATES:
                text = template.format(x=tp)
                if _kept(text, secrets):
                    kept[rid] = text[:100]
    assert kept == {}


def test_no_rule_keeps_a_bare_secret_followed_by_punctuation() -> None:
    rules = rule_set()
    kept, tried = {}, 0
    for rid, pairs in expected().items():
        secret = pairs[0][1][0]
        rule = rules.rule(rid)
        bare = f" {secret} "
        # Only rules that take a bare secret (most need "name = value" around it).
        if not any(k in bare.lower() for k in rule.keywords) or not rule.detect(bare):
            continue
        tried += 1
        for template in PUNCTUATION:
            if _kept(template.format(x=secret), [secret]):
                kept[rid] = template.format(x=secret)[:100]
    assert tried >= 100
    assert kept == {}


# The forms the red team found kept, assembled from pieces.
_HF = _k("hf_", "BnCKnnVMAJMrXynycgXBxMLVxQukLiQgJt")
_XAPP = _k("xapp-1-A0123456789-1234567890123-", "0a1b2c3d4e5f60718293a4b5c6d7e8f9" * 2)
ISSUE_FORMS = [
    (
        "GitLab PAT",
        _k("pushed with glpat-", "jdhvf426cphd9z1gk9re"),
        [_k("glpat-", "jdhvf426cphd9z1gk9re")],
    ),
    ("Hugging Face token", f"HF token {_HF}", [_HF]),
    ("Hugging Face CLI login", f"huggingface-cli login --token {_HF}", [_HF]),
    (
        "npm token",
        _k("npm_", "4ccfpebbrum13u9j2bw2ubhznzs4tg00008a in .npmrc"),
        [_k("npm_", "4ccfpebbrum13u9j2bw2ubhznzs4tg00008a")],
    ),
    ("Slack app token", f"{_XAPP} for socket mode", [_XAPP]),
    (
        "Sourcegraph token",
        _k("SRC_ACCESS_TOKEN sgp_", "0123456789abcdef0123456789abcdef01234567 ok"),
        [_k("sgp_", "0123456789abcdef0123456789abcdef01234567")],
    ),
    (
        "AWS ABIA id",
        _k("bedrock id ABIA", "3DSMBNPUR2X6BTXQ in the logs"),
        [_k("ABIA", "3DSMBNPUR2X6BTXQ")],
    ),
    ("AWS ACCA id", _k("id ACCA", "QWERTYUIOP7LKJHG rotated"), [_k("ACCA", "QWERTYUIOP7LKJHG")]),
    (
        "System.setProperty",
        _k('System.setProperty("X_TOKEN", "', "q8Zr4Lm2Vx9Tn6Pw3Ks7", '")'),
        ["q8Zr4Lm2Vx9Tn6Pw3Ks7"],
    ),
    (
        "Go short assignment",
        _k('xToken := "', "q8Zr4Lm2Vx9Tn6Pw3Ks7", '"'),
        ["q8Zr4Lm2Vx9Tn6Pw3Ks7"],
    ),
    (
        "colon-joined environment (the agent-memory importer)",
        _k("API_KEY=", "a1b2c3d4e5f6g7h8i9", ": PASSWORD=", "Tr0ub4dor&3xyz"),
        ["a1b2c3d4e5f6g7h8i9", "Tr0ub4dor&3xyz"],
    ),
    ("JSON password", _k('{"password": "', "Xy7!pQ2#zz9", '"}'), ["Xy7!pQ2#zz9"]),
    ("YAML password", _k("db:\n  password: ", "Xy7pQ2zz9Lm"), ["Xy7pQ2zz9Lm"]),
    (
        "--token flag",
        _k("gh auth login --token ghp_", "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2Qe"),
        [_k("ghp_", "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2Qe")],
    ),
    ("--token= flag", _k("tool --token=", "Zq9Lm2Vx8Tn4Pw7Ks3Rb upload"), ["Zq9Lm2Vx8Tn4Pw7Ks3Rb"]),
    (
        "--api-key flag",
        _k("cli --api-key ", "7f3a9c2e5b8d1f4a6c0e9b2d push"),
        ["7f3a9c2e5b8d1f4a6c0e9b2d"],
    ),
]


@pytest.mark.parametrize(("what", "text", "secrets"), ISSUE_FORMS, ids=[f[0] for f in ISSUE_FORMS])
def test_the_issue_forms_are_redacted(what: str, text: str, secrets: list[str]) -> None:
    assert _kept(text, secrets) == []
    assert "[redacted:" in scrub(text)


# -- the plan -----------------------------------------------------------------------------
def _all_sample_texts() -> list[str]:
    texts = [tp for pairs in expected().values() for tp, _ in pairs]
    texts += [fp for found in samples()["rules"].values() for fp in found["fps"]]
    return texts + _ordinary_texts()


@pytest.mark.slow
def test_anchored_scanning_finds_what_gitleaks_finds() -> None:
    # Rules run with pattern.match at the places their keywords (or literals) occur, with
    # gitleaks' lazy identifier prefix dropped: every secret gitleaks' own search finds
    # (in the rules the gate selects) must be inside something the scrubber finds.
    rules = rule_set()
    missed = []
    for text in _all_sample_texts():
        low = lower_aligned(text)
        found = rules.find(text, low)
        ids = {rid for k in rules.gate.hits(low) for rid in rules.by_keyword[k]}
        for rid in ids:
            for start, end, _, _ in rules.rule(rid).detect(text):
                if not any(s <= start and end <= e for s, e, _, _ in found):
                    missed.append((rid, text[:80]))
    assert missed == []


@pytest.mark.skipif(not aho_available(), reason="pyahocorasick is not installed")
def test_the_pure_re_gate_finds_what_the_automaton_finds() -> None:
    words = list(rule_set().by_keyword)
    aho, trie = KeywordGate(words, use_aho=True), KeywordGate(words, use_aho=False)
    assert (aho.kind, trie.kind) == ("aho", "trie")
    for text in _all_sample_texts():
        low = lower_aligned(text)
        a = {k: sorted(v) for k, v in aho.hits(low).items()}
        b = {k: sorted(v) for k, v in trie.hits(low).items()}
        assert a == b, text[:80]


# -- backtracking -------------------------------------------------------------------------
N = 40_000
FILLERS = {
    "letters": "a" * N,
    "letters and digits": "a1" * (N // 2),
    "spaces": " " * N,
    "dashes": "-" * N,
    "newlines": "\n" * N,
    "equals": "=" * N,
    "quotes": '"' * N,
    "dots": "." * N,
    "colons": ":" * N,
    "slashes": "/" * N,
    "mixed": "aB3=_-. " * (N // 8),
}
#: Bounds what would never end: a linear scan of these inputs takes milliseconds, the
#: quadratic patterns this guards against took 5-37 s on half this length.
BOUND_S = 20.0


def _adversarial(keyword: str) -> list[str]:
    texts = [(keyword * (N // max(1, len(keyword))))[:N]]
    for filler in FILLERS.values():
        texts += [f"{keyword} = {filler}", f"{filler}{keyword} = {filler}"]
    return texts


def _starts(low: str, keyword: str) -> list[int]:
    """Where ``keyword`` starts in ``low``, overlaps included: the gate's hits for that
    one keyword, found without scanning for all the others."""
    found, at = [], low.find(keyword)
    while at != -1:
        found.append(at)
        at = low.find(keyword, at + 1)
    return found


@pytest.mark.slow
def test_no_rule_backtracks_on_long_adversarial_text() -> None:
    rules = rule_set()
    slow = []
    for rid in rules.ids:
        rule = rules.rule(rid)
        for keyword in rule.keywords:
            texts = _adversarial(keyword)
            # The gate scans for every rule's keywords (three quarters of this test's time
            # when it ran on each text); one text a keyword shows it gives the same places.
            sample = lower_aligned(texts[1])
            assert rules.gate.hits(sample).get(keyword, []) == _starts(sample, keyword)
            for text in texts:
                low = lower_aligned(text)
                at = _starts(low, keyword)
                started = time.monotonic()
                rules.find_rule(rule, text, low, at)
                took = time.monotonic() - started
                if took > BOUND_S:
                    slow.append((rid, keyword, round(took, 1)))
    assert slow == []


@pytest.mark.parametrize("name", list(FILLERS))
def test_the_whole_scrubber_stays_linear_on_long_text(name: str) -> None:
    # memwork's own rules and the assignment layer too: "--" runs used to make the
    # command-line password pattern quadratic (23 s on 40,000 characters).
    filler = FILLERS[name]
    for text in (
        f"{filler} --token {filler}",
        f"password = {filler}",
        f"{filler}@{filler}",
        "mysql " + filler,
        "key" * (N // 3),
        f"https://{filler}",
    ):
        started = time.monotonic()
        scrub(text)
        assert time.monotonic() - started < BOUND_S, (name, text[:20])


# -- false positives ------------------------------------------------------------------------
def _ordinary_texts() -> list[str]:
    corpus = json.loads(ORDINARY.read_text(encoding="utf-8"))
    return [t for texts in corpus["texts"].values() for t in texts]


def _memwork_texts() -> list[str]:
    """memwork's own prose: the README, the docs, the demo store's records."""
    lines = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines += [line for line in doc.read_text().splitlines() if line.strip()]
    for table in sorted((ROOT / "data" / "demo").glob("*.json")):
        for doc in json.loads(table.read_text()).get("documents", {}).values():
            lines += [v for k, v in doc.items() if isinstance(v, str) and " " in v]
    return lines


def test_ordinary_developer_text_stays_as_typed() -> None:
    corpus = json.loads(ORDINARY.read_text(encoding="utf-8"))["texts"]
    changed = {
        cat: [t for t in texts if scrub(t, personal=False) != t] for cat, texts in corpus.items()
    }
    # File names, paths, hashes, UUIDs, versions and base64 without a secret keyword: none.
    for cat in ("file name", "path", "sha1", "sha256", "uuid", "version", "base64 blob"):
        assert changed[cat] == [], cat
    texts = [t for ts in corpus.values() for t in ts]
    rate = sum(len(c) for c in changed.values()) / len(texts)
    assert len(texts) >= 350 and rate <= 0.01, {c: v for c, v in changed.items() if v}


def test_false_positive_rate_on_memwork_text_is_at_most_one_percent() -> None:
    texts = _memwork_texts()
    changed = [t for t in texts if scrub(t, personal=False) != t]
    assert len(texts) >= 1000
    assert len(changed) / len(texts) <= 0.01, changed[:10]


def test_the_letta_block_keeps_its_file_name() -> None:
    text = "Signal: group-gating.ts with mention/reply detection"
    assert scrub(text) == text


# A token whose vendor prefix marks it, written without the name gitleaks wants before it.
_B36 = "k3v9q2m7x4z8w1n6b5c0"
_ALONE = {
    "new-relic-user-api-key": "NRAK-" + ("Q7W2E9R4T1Y6U3I8O5P0A2S7D").ljust(27, "9"),
    "new-relic-insert-key": "NRII-" + (_B36 * 2)[:32],
    "new-relic-browser-api-token": "NRJS-" + "9f3a7c1e5b2d8f4a6c0",
    "typeform-api-token": "tfp_" + (_B36 * 3)[:59],
    "defined-networking-api-token": "dnkey-" + (_B36 * 2)[:26] + "-" + (_B36 * 3)[:52],
    "square-secret": "sq0csp-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f",
    # memwork's own curator key: one the generic detector once let through (~1 in 100).
    "memwork-key": "mwc_EdbKLtoUqaBYQZVv1hnJGoCIbyfIFqeXQeGkkNTRwyE",
}


@pytest.mark.parametrize("kind", sorted(_ALONE))
@pytest.mark.parametrize(
    "form", ["{}", 'value: "{}"', "export TOKEN_VALUE={}", "rotate {}.", "[{}]", "x = '{}';"]
)
def test_a_token_is_marked_by_its_vendor_prefix_alone(kind: str, form: str) -> None:
    token = _ALONE[kind]
    text = form.format(token)
    done = scrub(text)
    assert token not in done and f"[redacted:{kind}]" in done, done
    assert done == text.replace(token, f"[redacted:{kind}]")


@pytest.mark.parametrize(
    "text",
    [
        "NRAK-" + "A" * 27,  # no digit: a placeholder, not a drawn key
        "live_streaming_configuration_options_for_the_app",  # a name with the prefix
        "see the tfp_ prefix in the docs",
        "XNRAK-Q7W2E9R4T1Y6U3I8O5P0A2S7D99",  # the prefix inside a longer word
        "sq0csp-short",
        "the mwc_ and mwa_ prefixes name memwork's keys",
        "the file mwc_notes_for_the_curator_of_this_store_version.md",  # no digit, no capital
    ],
)
def test_a_prefix_without_a_token_is_kept(text: str) -> None:
    assert scrub(text) == text


def test_every_curator_key_and_agent_token_memwork_makes_is_redacted() -> None:
    """Not some: the keys memwork hands out are random, and a detector that judges how
    random a string looks lets a plain-looking one through now and then."""
    import secrets as random_bytes

    from memwork.core.ledger import agent_tokens, curator

    made = [curator.new_key() for _ in range(2_000)]
    made += [agent_tokens.PREFIX + random_bytes.token_urlsafe(32) for _ in range(2_000)]
    for key in made:
        assert key not in scrub(f"remember the key {key}"), key


def test_a_named_token_is_still_found_by_the_rule_itself() -> None:
    token = _ALONE["new-relic-user-api-key"]
    assert scrub(f"newrelic_key = {token}") == "newrelic_key = [redacted:new-relic-user-api-key]"
