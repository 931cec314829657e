"""Seeded, realistic-looking agent episodes for benchmarks and big test stores."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

TASKS = [
    "deploy-service",
    "triage-alert",
    "root-cause-analysis",
    "write-migration",
    "refactor-module",
    "fix-flaky-test",
    "review-pr",
    "upgrade-dependency",
    "tune-query",
    "rotate-credentials",
    "scale-cluster",
    "draft-postmortem",
    "backfill-data",
    "bisect-regression",
    "patch-cve",
    "configure-ci",
    "profile-endpoint",
    "clean-logs",
    "migrate-bucket",
    "update-docs",
]
SERVICES = [
    "auth-service",
    "billing-api",
    "search-indexer",
    "payments-gateway",
    "notification-worker",
    "user-profile",
    "ledger",
    "gateway",
    "scheduler",
    "cache-layer",
    "ingest-pipeline",
]
ACTIONS = [
    "Investigated {s} first",
    "Rolled back {s}",
    "Added a canary for {s}",
    "Bisected {s}",
    "Read the {s} logs",
    "Scaled {s} horizontally",
    "Pinned the {s} client version",
    "Reproduced the bug in {s} locally",
    "Wrote a regression test for {s}",
]
FINDINGS = [
    "found a JWT expiry bug",
    "found a missing index",
    "found a race in the retry loop",
    "found stale cache entries",
    "found a misconfigured timeout",
    "found an N+1 query",
    "found a leaked file handle",
    "found the flag defaulted on",
    "found a schema drift",
]
MISTAKES = [
    "Escalated too early before diagnosing",
    "Skipped the canary stage",
    "Edited the config in production",
    "Ignored the failing health check",
    "Retried without backoff",
    "Assumed the cache was warm",
    "Ran the migration twice",
    "Did not read the runbook",
    "Changed two things at once",
    "Forgot to pin the version",
]
SUCCESSES = [
    "Checked the dashboards before acting",
    "Rolled out behind a feature flag",
    "Wrote the test before the fix",
    "Bisected instead of guessing",
    "Asked for a second review",
    "Verified the rollback plan first",
    "Kept the change small",
    "Read the error message fully",
]
ERRORS = [
    ("TimeoutError", "request to {s} timed out after 30s"),
    ("AssertionError", "expected 200 from {s}, got 503"),
    ("KeyError", "'region' missing in {s} config"),
    ("ConnectionRefused", "{s}:8443 refused the connection"),
]


def episode(rng: random.Random, n: int) -> dict[str, Any]:
    """One plausible episode; ``n`` makes summaries distinct."""
    task = rng.choice(TASKS)
    service = rng.choice(SERVICES)
    score = round(min(1.0, max(0.0, rng.gauss(0.68, 0.22))), 2)
    summary = f"{rng.choice(ACTIONS).format(s=service)}, {rng.choice(FINDINGS)} (attempt {n})"
    item: dict[str, Any] = {
        "task_id": task,
        "score": score,
        "steps": rng.randint(2, 40),
        "summary": summary,
        "mistakes": rng.sample(MISTAKES, k=1 if score < 0.6 else 0),
        "successes": rng.sample(SUCCESSES, k=1 if score >= 0.8 else 0),
    }
    if score < 0.5 and rng.random() < 0.7:
        kind, message = rng.choice(ERRORS)
        item["errors"] = [{"error_type": kind, "message": message.format(s=service)}]
    if score < 0.5 and rng.random() < 0.4:
        item["mistake_cards"] = [
            {
                "mistake_type": rng.choice(
                    ["premature_escalation", "skipped_check", "unsafe_change"]
                ),
                "correct_decision": rng.choice(["diagnose first", "run the canary", "use a flag"]),
                "evidence": f"{service} incident #{n}",
            }
        ]
    return item


def episodes(seed: int, count: int) -> Iterator[dict[str, Any]]:
    """``count`` episodes from a seeded generator."""
    rng = random.Random(seed)
    for n in range(1, count + 1):
        yield episode(rng, n)
