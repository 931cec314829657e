"""Benchmark the global search index against a plain rapidfuzz scan.

For 1k / 10k / 100k synthetic memory records (seeded, so every run sees the same
corpus) it measures:

* build: time to construct :class:`core.services.recall.search_index.SearchIndex` and the growth
  of the process's resident memory while doing so;
* keystrokes: each of ~20 queries (common words, typos, multi-word prefixes) is
  typed one character at a time and every prefix is searched, as the search box
  does; caches are cleared before each query, so only the keystrokes of that
  query warm them. Median, p95 and max per keystroke;
* pasted: each whole query searched once with cold caches;
* baseline: ``rapidfuzz.process.extract(query, strings, scorer=fuzz.WRatio,
  limit=20)`` over ``title + " " + text`` of every record, for each whole query
  (its cost hardly depends on the query length).

Usage: python bench/bench_search.py [--sizes 1000 10000 100000] [--rounds 3] [--show]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
from pathlib import Path
from time import perf_counter

from rapidfuzz import fuzz, process

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memwork.core.services.recall.search_index import SearchDoc, SearchIndex  # noqa: E402

QUERIES = [
    "jwt expiry",
    "deplo rollb",
    "rollbak",  # typo
    "auth servce",  # typo
    "the",  # in most records
    "found",  # common
    "databse migration",  # typo
    "cache invalidation",
    "flaky test",
    "timeout retry",
    "token refresh",
    "investigated billing",
    "memory leak worker",
    "rate limit",
    "schema",
    "permision denied",  # typo
    "connection pool exhausted",
    "kubernetes pod restart",
    "null pointer",
    "the deploy",  # two common words
]

SERVICES = [
    "auth-service", "billing-api", "search-indexer", "payments-gateway", "user-profile",
    "notification-worker", "ingest-pipeline", "report-builder", "feature-flags", "api-gateway",
    "session-store", "email-sender", "audit-log", "metrics-collector", "scheduler",
    "checkout-service", "inventory-sync", "cdn-edge", "graphql-router", "webhook-relay",
]  # fmt: skip
PROBLEMS = [
    "JWT expiry bug", "race condition", "memory leak", "deadlock", "null pointer exception",
    "stale cache", "cache invalidation bug", "off-by-one error", "timeout", "retry storm",
    "connection pool exhausted", "schema drift", "flaky test", "permission denied error",
    "rate limit exceeded", "clock skew", "token refresh loop", "missing index",
    "slow query", "OOM kill", "DNS resolution failure", "TLS handshake failure",
    "serialization error", "unicode decoding error", "config typo", "dependency conflict",
    "version mismatch", "disk full", "pod restart loop", "migration lock",
]  # fmt: skip
VERBS = [
    "investigated", "fixed", "debugged", "rolled back", "patched", "profiled", "refactored",
    "reviewed", "traced", "reproduced", "bisected", "deployed", "migrated", "documented",
    "monitored", "isolated", "benchmarked", "audited", "upgraded", "reverted",
]  # fmt: skip
NOUNS = [
    "deploy", "rollback", "database", "migration", "cache", "queue", "worker", "token",
    "session", "request", "response", "header", "payload", "schema", "table", "column",
    "index", "query", "transaction", "lock", "thread", "process", "container", "kubernetes",
    "pod", "node", "cluster", "replica", "shard", "partition", "topic", "consumer",
    "producer", "endpoint", "client", "server", "proxy", "load balancer", "certificate",
    "secret", "credential", "permission", "role", "policy", "user", "tenant", "account",
    "invoice", "payment", "refund", "order", "cart", "product", "price", "discount", "email",
    "template", "report", "dashboard", "alert", "metric", "log", "trace", "span", "latency",
    "throughput", "error rate", "retry", "backoff", "circuit breaker", "feature flag",
    "config", "environment", "variable", "build", "pipeline", "test", "fixture", "mock",
    "snapshot", "coverage", "release", "branch", "commit", "pull request", "review",
    "changelog", "dependency", "package", "library", "module", "function", "class", "method",
    "parameter", "argument", "exception", "stack trace", "memory", "cpu", "disk", "network",
    "connection", "socket", "timeout", "limit", "quota", "budget", "heap", "garbage collector",
    "scheduler", "cron job", "batch", "stream", "event", "webhook", "callback", "handler",
]  # fmt: skip
ADJECTIVES = [
    "intermittent", "slow", "stale", "missing", "duplicate", "corrupted", "expired",
    "invalid", "unexpected", "large", "empty", "partial", "concurrent", "legacy", "new",
    "broken", "noisy", "critical", "minor", "flaky", "hot", "cold", "idle", "pending",
]  # fmt: skip
TEMPLATES = [
    "Investigated {svc} first, found {prob} in {mod}.",
    "The {adj} {noun} caused {prob} after the {noun2} change.",
    "{Verb} the {noun} in {svc} and confirmed the fix with a {adj} {noun2}.",
    "Root cause was a {adj} {noun} in {mod}; the {noun2} retried until it hit the {noun3}.",
    "Users saw {prob} when the {noun} was {adj}; added a test for {mod}.",
    "Next time check the {noun} and the {noun2} before touching {svc}.",
    "Ticket {ticket} tracks the {adj} {noun}; see commit {sha}.",
    "p95 latency of {svc} rose to {ms} ms after deploy {ticket}.",
    "We {verb} {svc} and the {noun} recovered within {n} minutes.",
    "The {noun} in {mod} was {adj}, so the {noun2} kept failing with {prob}.",
    "Paired with {name} on the {noun}; {verb} {mod} and wrote it down.",
    "Avoid {adj} {noun} updates during the {noun2} window of {svc}.",
]
SYLLABLES = [
    "ka", "lo", "mi", "ra", "ven", "tor", "zu", "pel", "qua", "dri", "ost", "fen", "gra",
    "mun", "sil", "bra", "nex", "tri", "vol", "cor", "dan", "el", "fi", "hu", "jor", "ix",
]  # fmt: skip
NAMES = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances"]
KINDS = ["episode", "lesson", "rule", "mistake", "slot", "observation"]


def make_corpus(count: int, seed: int = 7) -> list[SearchDoc]:
    """``count`` deterministic agent-memory records of every kind."""
    rng = random.Random(seed)
    modules = sorted(
        {
            "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
            + rng.choice(["", "_client", "_store", "_handler", "_utils", "_job"])
            for _ in range(3000)
        }
    )

    def zipf(items: list[str]) -> str:  # earlier items are much more frequent
        return items[min(int(rng.paretovariate(1.0)) - 1, len(items) - 1)]

    def sentence() -> str:
        verb = rng.choice(VERBS)
        return rng.choice(TEMPLATES).format(
            svc=rng.choice(SERVICES),
            prob=rng.choice(PROBLEMS),
            mod=f"{zipf(modules)}.py",
            adj=rng.choice(ADJECTIVES),
            noun=zipf(NOUNS),
            noun2=rng.choice(NOUNS),
            noun3=rng.choice(NOUNS),
            verb=verb,
            Verb=verb.capitalize(),
            ticket=f"#{rng.randint(100, 99999)}",
            sha=f"{rng.getrandbits(28):07x}",
            ms=rng.randint(20, 2500),
            n=rng.randint(1, 90),
            name=rng.choice(NAMES),
        )

    docs = []
    for index in range(count):
        kind = KINDS[index % len(KINDS)]
        svc, prob = rng.choice(SERVICES), rng.choice(PROBLEMS)
        if kind == "episode":
            title = f"{rng.choice(VERBS).capitalize()} {svc} {prob}"
        elif kind == "lesson":
            title = f"Always check the {zipf(NOUNS)} before the {rng.choice(NOUNS)}"
        elif kind == "rule":
            title = f"Never {rng.choice(VERBS)} {svc} during a {rng.choice(NOUNS)} freeze"
        elif kind == "mistake":
            title = f"Mistake: {prob} in {svc}"
        elif kind == "slot":
            title = f"{zipf(modules)}: {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}"
        else:
            title = f"{svc} {rng.choice(['latency', 'error rate', 'memory'])} {prob}"
        text = " ".join(sentence() for _ in range(rng.randint(1, 4)))
        docs.append(SearchDoc(kind, f"{kind[:3]}_{index:08d}", title, text))
    return docs


def rss_bytes() -> int | None:
    """Resident set size of this process (Linux only)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_size(count: int, seed: int, rounds: int, show: bool) -> dict[str, float]:
    docs = make_corpus(count, seed)
    gc.collect()
    rss0 = rss_bytes()
    started = perf_counter()
    index = SearchIndex(docs)
    build = perf_counter() - started
    rss1 = rss_bytes()
    memory = (rss1 - rss0) / 2**20 if rss0 is not None and rss1 is not None else float("nan")

    keystrokes: list[float] = []
    for _round in range(rounds):
        for query in QUERIES:
            index.clear_caches()
            for end in range(1, len(query) + 1):
                started = perf_counter()
                index.search(query[:end], limit=20)
                keystrokes.append(perf_counter() - started)

    pasted: list[float] = []
    for query in QUERIES:
        index.clear_caches()
        started = perf_counter()
        hits = index.search(query, limit=20)
        pasted.append(perf_counter() - started)
        if show:
            top = f"{hits[0].score:6.2f} {hits[0].doc.title}" if hits else "-"
            print(f"    {query!r:30} {len(hits):3} hits  top: {top}")

    strings = [f"{doc.title} {doc.text}" for doc in docs]
    baseline: list[float] = []
    for query in QUERIES:
        started = perf_counter()
        process.extract(query, strings, scorer=fuzz.WRatio, limit=20)
        baseline.append(perf_counter() - started)

    return {
        "docs": count,
        "vocab": len(index._vocab),
        "build_s": build,
        "memory_mb": memory,
        "key_median_ms": statistics.median(keystrokes) * 1e3,
        "key_p95_ms": pct(keystrokes, 0.95) * 1e3,
        "key_max_ms": max(keystrokes) * 1e3,
        "keystrokes": len(keystrokes),
        "paste_median_ms": statistics.median(pasted) * 1e3,
        "paste_p95_ms": pct(pasted, 0.95) * 1e3,
        "base_median_ms": statistics.median(baseline) * 1e3,
        "base_p95_ms": pct(baseline, 0.95) * 1e3,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3, help="times each query is typed")
    parser.add_argument("--show", action="store_true", help="print each query's top hit")
    args = parser.parse_args(argv)

    rows = []
    for count in args.sizes:
        print(f"  {count:,} docs ...", flush=True)
        rows.append(bench_size(count, args.seed, args.rounds, args.show))

    print()
    print(
        "| docs | vocab | build s | build MB | keystroke median / p95 / max ms "
        "| pasted median / p95 ms | WRatio scan median / p95 ms | speed-up (median) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['docs']:,} | {r['vocab']:,} | {r['build_s']:.2f} | {r['memory_mb']:.0f} "
            f"| {r['key_median_ms']:.2f} / {r['key_p95_ms']:.2f} / {r['key_max_ms']:.2f} "
            f"| {r['paste_median_ms']:.2f} / {r['paste_p95_ms']:.2f} "
            f"| {r['base_median_ms']:.1f} / {r['base_p95_ms']:.1f} "
            f"| {r['base_median_ms'] / r['key_median_ms']:.0f}x |"
        )
    print(
        f"\n({rows[0]['keystrokes']} keystrokes per size: {len(QUERIES)} queries typed "
        f"{args.rounds}x; baseline: {len(QUERIES)} whole queries)"
    )


if __name__ == "__main__":
    main()
