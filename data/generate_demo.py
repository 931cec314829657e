"""Generate ``data/demo``: a seeded, realistic store that shows every feature.

Run ``make demo`` (or ``python data/generate_demo.py``). The output is
deterministic: the same seed, clock and code give byte-identical files, so
the committed demo and the workbench snapshots stay stable.

What it holds: six tasks and ~140 episodes of a coding/SRE agent with
failures and errors, repeated mistake cards, rules, ~26 lessons of varied
age and confidence (some about to be forgotten, some pinned), slots (one
imported from a Letta agent file and over its limit), three sessions with
observations and working memory, and two checkpoints; the review queue is on,
with agent proposals waiting (a near-duplicate, a contradiction, slot edits to
diff) and two decided; memory lint finds something of every kind. The story is
replayed in time order, so the audit log reads like a real store's.
"""

from __future__ import annotations

import random
import shutil
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memwork.core.base import ids
from memwork.core.base.clock import iso  # noqa: E402
from memwork.core.domain import (
    actions,
    episodes,
    lessons,
    link_ops,
    profiles,
    rules,
    sessions,
    slots,
)
from memwork.core.domain.working_memory import checkpoints as wm_checkpoints
from memwork.core.domain.working_memory import keys as wm_keys
from memwork.core.domain.working_memory import scratchpad as wm_scratchpad
from memwork.core.domain.working_memory import task as wm_task
from memwork.core.ledger import config, curator
from memwork.core.ops import runner
from memwork.core.services import checkpoints, review
from memwork.core.services.context.build import build_context  # noqa: E402
from memwork.core.services.context.log import record_injections  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

SEED = 1729
#: The demo's "now"; `memwork --demo` starts its clock here.
DEMO_NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
OUT = ROOT / "data" / "demo"
LETTA_SAMPLE = ROOT / "data" / "samples" / "support-agent.af"

TASKS = {
    "deploy-api": {
        "summaries": [
            "Rolled out api v{v} behind the canary; error rate stayed flat, promoted after 15 min",
            "Deployed api v{v}; health checks failed on two pods, rolled back and pinned the image",
            "Shipped api v{v} with the new rate limiter; had to raise the burst limit after alerts",
            "Blue/green switch for api v{v}; DNS TTL delayed the cutover by ten minutes",
        ],
        "mistakes": ["Skipped the canary stage", "Promoted before the error budget recovered"],
        "successes": ["Watched the canary dashboard before promoting", "Pinned the image digest"],
        "errors": [("HealthCheckFailed", "pods api-7f9c and api-2b1d failed readiness (503)")],
        "card": (
            "skipped_step",
            "run the canary for 15 minutes",
            "error rate spiked to 4% in prod",
        ),
        "card2": (
            "bad_rollout",
            "roll back at the first failed health check",
            "kept rolling for 6 minutes with 2 pods failing",
        ),
    },
    "triage-alert": {
        "summaries": [
            "Paged for p99 latency on checkout; traced it to a cold cache after the 02:00 deploy",
            "Disk pressure alert on ingest-3; rotated logs and filed a ticket for retention",
            "False positive: alert threshold too tight after traffic shift, proposed new SLO",
            "CPU alert on search; found a runaway reindex job and paused it",
        ],
        "mistakes": ["Escalated before reading the runbook", "Silenced the alert without a ticket"],
        "successes": ["Checked recent deploys first", "Linked the runbook in the incident"],
        "errors": [("TimeoutError", "metrics query for checkout p99 timed out after 30s")],
        "card": (
            "premature_escalation",
            "read the runbook before paging",
            "paged on-call at 03:10 for a known issue",
        ),
        "card2": (
            "missing_context",
            "check recent deploys first",
            "spent 40 min before noticing the 02:00 deploy",
        ),
    },
    "fix-flaky-test": {
        "summaries": [
            "test_checkout_total flaked on CI; found a float rounding race, fixed with Decimal",
            "Flaky e2e login test; the fixture reused a session cookie, isolated it per test",
            "Integration test depended on wall clock; injected a fake clock",
            "Could not reproduce the flake locally; added logging and a retry marker for now",
        ],
        "mistakes": ["Added a retry instead of finding the cause", "Changed two things at once"],
        "successes": ["Reproduced with the CI seed", "Wrote the failing test first"],
        "errors": [("AssertionError", "expected 42.10, got 42.099999 in test_checkout_total")],
        "card": (
            "masked_symptom",
            "find the root cause before retrying",
            "retry hid a real race for two weeks",
        ),
        "card2": ("wall_clock", "inject a fake clock", "test failed only between 23:59 and 00:00"),
    },
    "write-migration": {
        "summaries": [
            "Added a nullable column and backfilled in batches of 10k; no lock contention",
            "Migration locked the orders table for 40s; rewrote it to index concurrently",
            "Renamed a column with a two-phase deploy (write both, read new, drop old)",
            "Backfill script ran twice because the job retried; made it idempotent",
        ],
        "mistakes": [
            "Created an index without CONCURRENTLY",
            "Ran the backfill without a checkpoint",
        ],
        "successes": ["Tested the migration on a prod-sized copy", "Made the backfill idempotent"],
        "errors": [("LockTimeout", "canceling statement due to lock timeout on table orders")],
        "card": ("unsafe_change", "create indexes concurrently", "orders table locked for 40s"),
        "card2": (
            "non_idempotent",
            "make backfills idempotent",
            "backfill ran twice after a job retry",
        ),
    },
    "review-pr": {
        "summaries": [
            "Reviewed the auth refactor; asked for tests around token refresh, approved after",
            "PR touched 40 files; asked to split it, reviewed the storage half",
            "Caught a missing await in the webhook handler",
            "Approved a docs change; suggested a diagram for the retry flow",
        ],
        "mistakes": ["Approved without running the tests", "Nitpicked style before correctness"],
        "successes": ["Ran the branch locally", "Asked for a test that fails without the fix"],
        "errors": [("ReviewMiss", "missed an unawaited coroutine that reached prod")],
        "card": (
            "shallow_review",
            "run the branch before approving",
            "unawaited coroutine shipped",
        ),
    },
    "rotate-credentials": {
        "summaries": [
            "Rotated the payments API key; updated the secret store and restarted workers",
            "Rotation broke the nightly export: the job cached the old key; added a reload hook",
            "Rotated database passwords with dual credentials, zero downtime",
            "Found a key in a CI log (redacted); revoked it and scrubbed the log",
        ],
        "mistakes": ["Revoked the old key before all consumers switched"],
        "successes": ["Used dual credentials during the switch", "Checked every consumer first"],
        "errors": [("AuthError", "401 from payments API after key rotation in export job")],
        "card": (
            "ordering_error",
            "switch all consumers before revoking",
            "nightly export failed with 401",
        ),
    },
}

DEPLOY_SESSION = "Deploy api 2.19 with the new rate limiter"
ALERT_SESSION = "Investigate p99 latency alert"
MIGRATE_SESSION = "Migrate orders.status to an enum"
SESSION_NOTES = [
    ("tool", "kubectl rollout status deploy/api -n checkout"),
    ("decision", "Canary at 5% for 15 minutes before promoting"),
    ("note", "Error rate flat at 0.2% on the canary"),
    ("error", "readiness probe failed on api-7f9c: HTTP 503"),
    ("tool", "psql -c 'select count(*) from orders where status is null'"),
    ("decision", "Backfill in batches of 10k with a checkpoint table"),
    ("note", "Lock wait stays under 50 ms during the backfill"),
]
NOTE_TAGS = {"error": ["incident"], "decision": ["plan"], "tool": ["shell"]}

LESSONS = [
    # (content, scope, confidence, age in days, reinforcements, pinned)
    ("Read the runbook before paging anyone", "task:triage-alert", 0.8, 3, 4, False),
    (
        "Create database indexes concurrently in production",
        "task:write-migration",
        0.9,
        20,
        6,
        True,
    ),
    (
        "Never revoke a credential before every consumer has switched",
        "task:rotate-credentials",
        0.75,
        9,
        2,
        False,
    ),
    ("Canary every deploy for at least fifteen minutes", "task:deploy-api", 0.85, 2, 5, True),
    (
        "Prefer fixing a flaky test's cause over adding retries",
        "task:fix-flaky-test",
        0.6,
        15,
        1,
        False,
    ),
    (
        "Run the branch locally before approving a pull request",
        "task:review-pr",
        0.55,
        12,
        0,
        False,
    ),
    ("Small changes are easier to review and to roll back", "global", 0.7, 30, 3, False),
    ("Write down what you tried before escalating", "global", 0.5, 40, 0, False),
    ("Check recent deploys first when an alert fires", "global", 0.65, 6, 2, False),
    ("Keep secrets out of logs; scrub before sharing output", "global", 0.9, 50, 7, True),
    ("Backfills must be idempotent and resumable", "task:write-migration", 0.7, 25, 2, False),
    ("Dual credentials make rotations zero-downtime", "task:rotate-credentials", 0.6, 33, 1, False),
    (
        "DNS TTLs delay blue/green cutovers; lower them a day before",
        "task:deploy-api",
        0.45,
        45,
        0,
        False,
    ),
    ("Ask for a failing test that proves the fix", "task:review-pr", 0.6, 8, 1, False),
    (
        "Inject clocks instead of reading wall time in tests",
        "task:fix-flaky-test",
        0.7,
        18,
        2,
        False,
    ),
    (
        "Silence an alert only with a ticket that explains why",
        "task:triage-alert",
        0.35,
        52,
        0,
        False,
    ),
    ("Dashboards lie when the metrics pipeline is behind", "global", 0.3, 47, 0, False),
    ("Mobile clients cache API responses for 24 hours", "project:checkout", 0.25, 60, 0, False),
    ("Use Decimal for money, never floats", "project:checkout", 0.8, 10, 3, False),
    ("The staging database is refreshed every Monday", "project:checkout", 0.2, 55, 0, False),
    ("Pause reindex jobs during peak traffic", "task:triage-alert", 0.5, 4, 0, False),
    ("Pin container images by digest, not by tag", "task:deploy-api", 0.7, 7, 2, False),
    ("Old feature flags cause surprising behaviour; clean them up", "global", 0.15, 70, 0, False),
    ("Verify the rollback plan before every deploy", "task:deploy-api", 0.4, 36, 0, False),
    ("Split pull requests over 400 lines", "task:review-pr", 0.5, 1, 0, False),
    # What memory lint finds: a lesson that repeats a line of a slot, one that says the
    # opposite of another, near-duplicates nobody merged, and a lesson that tells the
    # agent to do what a derived [AVOID] rule warns against.
    ("Do not page the database team before 08:00 UTC.", "global", 0.6, 16, 1, False),
    ("Never pause reindex jobs during peak traffic", "task:triage-alert", 0.45, 2, 0, False),
    ("Link the runbook in every incident channel", "task:triage-alert", 0.55, 14, 1, False),
    ("Link the runbook in the incident channel", "task:triage-alert", 0.5, 9, 0, False),
    ("Promote hotfixes before the error budget recovers", "task:deploy-api", 0.4, 5, 0, False),
]


def _episode(rng: random.Random, task: str, n: int, when: datetime) -> dict:
    spec = TASKS[task]
    # The agent gets better over the six weeks (lessons and rules at work), so the
    # Lessons pane's effect column has improvements to show, not only noise.
    trend = 0.58 + 0.25 * min(n, 140) / 140
    score = round(min(1.0, max(0.05, rng.gauss(trend, 0.2))), 2)
    item = {
        "task_id": task,
        "score": score,
        "steps": rng.randint(3, 28),
        "summary": rng.choice(spec["summaries"]).format(v=f"2.{n // 7}.{n % 7}"),
        "recorded_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "mistakes": [rng.choice(spec["mistakes"])] if score < 0.6 else [],
        "successes": [rng.choice(spec["successes"])] if score >= 0.8 else [],
        "worker_id": rng.choice(["worker-a", "worker-b"]),
    }
    if score < 0.5:
        kind, message = rng.choice(spec["errors"])
        if rng.random() < 0.8:
            item["errors"] = [{"error_type": kind, "message": message, "resolution": ""}]
        else:
            item["metadata"] = {"phase": rng.choice(["build", "verify", "apply"]), "exit_code": 1}
    if score < 0.6 and rng.random() < 0.6:
        choices = [spec["card"], spec.get("card2", spec["card"])]
        mistake_type, correct, evidence = rng.choice(choices)
        card = {
            "mistake_type": mistake_type,
            "correct_decision": correct,
            "bad_decision": rng.choice(spec["mistakes"]).lower(),
            "evidence": evidence,
            "worker_id": item["worker_id"],
        }
        if rng.random() < 0.7:  # most agents say what to do instead; some leave the default
            card["lesson"] = f"Next time, {correct}."
        item["mistake_cards"] = [card]
    return item


class Timeline:
    """Actions collected in any order, then replayed in time order.

    A real store's audit log is written as things happen; replaying the demo's
    story by time keeps its History pane, checkpoints and episode indexes
    reading the same way instead of jumping back and forth in time.
    """

    def __init__(self) -> None:
        self._events: list[tuple[datetime, int, Callable[[], object]]] = []

    def at(self, when: datetime, action: Callable[[], object]) -> None:
        self._events.append((when, len(self._events), action))

    def replay(self) -> None:
        for _, _, action in sorted(self._events, key=lambda event: event[:2]):
            action()


def generate(out: Path = OUT) -> Path:
    """Write the demo store to ``out`` (replacing it)."""
    rng = random.Random(SEED)
    ids.seed(SEED)
    if out.exists():
        shutil.rmtree(out)
    store = Store(out)
    timeline = Timeline()
    actor = "api:demo-generator"
    start = DEMO_NOW - timedelta(days=42)
    session_ids: dict[str, str] = {}

    def record(
        item: dict, when: datetime, session: str | None = None, agent: str = "atlas"
    ) -> None:
        if session is not None:
            item["session_id"] = session_ids[session]
        # Whose episode it is (the isolation setting, the workbench's agent filter): mostly
        # atlas, some a second agent's, some a CI script's with no agent id (global).
        by = f"api:{agent}" if agent else "api"
        episodes.record_episodes(store, [item], now=when, actor=by)

    # Episodes over six weeks; a burst of failures in the last day feeds the failure block.
    task_names = list(TASKS)
    for n in range(1, 141):
        when = start + timedelta(hours=n * 7.1)
        task = task_names[(n * 5 + rng.randint(0, 2)) % len(task_names)]
        agent = "hermes" if n % 5 == 0 else "" if n % 7 == 0 else "atlas"
        timeline.at(when, partial(record, _episode(rng, task, n, when), when, agent=agent))
    _plan_sessions(store, timeline, session_ids)
    for n, (task, ago, session) in enumerate(
        (
            ("deploy-api", timedelta(hours=20), DEPLOY_SESSION),
            ("triage-alert", timedelta(hours=2), ALERT_SESSION),
            ("write-migration", timedelta(minutes=30), MIGRATE_SESSION),
        )
    ):
        when = DEMO_NOW - ago
        item = _episode(rng, task, 200 + n, when)
        item["score"] = 0.2 + n * 0.1
        kind, message = TASKS[task]["errors"][0]
        resolution = "rolled back and pinned the previous image" if n == 0 else ""
        item["errors"] = [{"error_type": kind, "message": message, "resolution": resolution}]
        timeline.at(when, partial(record, item, when, session))

    timeline.at(
        DEMO_NOW - timedelta(days=1),
        partial(
            checkpoints.create,
            store,
            "after the first six weeks of episodes",
            now=DEMO_NOW - timedelta(days=1),
            actor="tui",
        ),
    )
    _plan_lessons(store, timeline, actor)
    timeline.at(start, partial(_set_up_by_hand, store, start))
    if LETTA_SAMPLE.exists():
        from memwork.core.services.interop.importer import run_import

        when = DEMO_NOW - timedelta(days=3)
        timeline.at(
            when, partial(run_import, store, LETTA_SAMPLE, fmt="letta", now=when, actor="cli")
        )
    timeline.at(
        DEMO_NOW - timedelta(hours=3),
        partial(
            checkpoints.create,
            store,
            "before curating lessons",
            now=DEMO_NOW - timedelta(hours=3),
            actor="tui",
        ),
    )
    curated = DEMO_NOW - timedelta(hours=1, minutes=30)
    timeline.at(curated, partial(_curate, store, curated))
    _plan_review(store, timeline)
    # Last, at the demo's instant: ids made before keep the values snapshots show.
    timeline.at(DEMO_NOW, partial(_plan_work, store, session_ids))
    timeline.replay()
    with store.transaction():
        store.put("meta", "demo", {"id": "demo", "now": iso(DEMO_NOW), "seed": SEED})
    # Everything in the table files, the log empty: the committed demo reads as plain
    # files, and its bytes do not depend on when the generator ran.
    store.fold_log()
    return out


def _plan_work(store: Store, session_ids: dict[str, str]) -> None:
    """Work items with dependencies, the project's profile, and links between records
    (one left dangling by a slot the developer deleted, for lint to find)."""
    when, agent = DEMO_NOW, "cli:atlas"
    session = session_ids[MIGRATE_SESSION]

    def add(title: str, priority: int = 0, after: tuple[str, ...] = ()) -> str:
        made = actions.create(
            store,
            title,
            session=session,
            project="checkout",
            priority=priority,
            after=list(after),
            now=when,
            actor=agent,
        )
        return str(made["id"])

    runbook = add("Write the canary runbook", 2)
    stage = add("Add a canary stage to the deploy pipeline", 2, (runbook,))
    add("Alert on the canary's error rate", 1, (stage,))
    keys = add("Rotate the staging database keys", 1)
    add("Backfill the orders index", 0, (keys,))
    flags = add("Remove the old feature flags")
    actions.update(
        store, runbook, status="done", note="docs/runbooks/canary.md", now=when, actor=agent
    )
    actions.update(store, stage, status="active", now=when, actor=agent)
    actions.update(
        store, flags, status="blocked", note="waiting for the product team", now=when, actor=agent
    )
    profiles.set_profile(
        store,
        "checkout",
        "Checkout: the shop's payment flow, owned by the payments team.\n"
        "Deploys through Argo CD with a canary stage; Postgres 16 holds the orders.",
        now=when,
        actor="tui",
    )
    by_text = {x["content"]: x["id"] for x in lessons.list_lessons(store, when, include_all=True)}
    runbook_lesson = by_text["Read the runbook before paging anyone"]
    link_ops.add_link(store, runbook_lesson, "file:docs/runbooks/paging.md", now=when, actor="tui")
    link_ops.add_link(
        store, runbook_lesson, "corrections/user-feedback", kind="refines", now=when, actor="tui"
    )
    canary = by_text["Canary every deploy for at least fifteen minutes"]
    link_ops.add_link(store, canary, stage, kind="motivates", now=when, actor="tui")
    slots.set_slot(store, "handover/oncall", "Paging notes for the week.", now=when, actor="tui")
    link_ops.add_link(store, runbook_lesson, "handover/oncall", kind="cites", now=when, actor="tui")
    slots.delete_slot(store, "handover/oncall", now=when, actor="tui")


def _plan_lessons(store: Store, timeline: Timeline, actor: str) -> None:
    """Lessons learnt over the weeks: reinforced, pinned, and one paraphrase."""
    created_ids: dict[str, str] = {}

    def add(content: str, scope: str, confidence: float, when: datetime) -> None:
        result = lessons.add_lesson(
            store,
            content,
            now=when,
            actor=actor,
            scope=scope,
            confidence=confidence,
            on_duplicate="keep-both",
        )
        created_ids[content] = result.lesson["id"]

    def reinforce(content: str, when: datetime) -> None:
        lessons.reinforce(store, created_ids[content], now=when, actor=actor)

    def pin(content: str, when: datetime) -> None:
        lessons.set_pinned(store, created_ids[content], True, now=when, actor="tui")

    for content, scope, confidence, age, reinforced, pinned in LESSONS:
        created = DEMO_NOW - timedelta(days=age)
        timeline.at(created, partial(add, content, scope, confidence, created))
        for k in range(reinforced):
            # Spread evenly between creation and now, never in the demo's future.
            when = created + (DEMO_NOW - created) * (k + 1) / (reinforced + 1)
            timeline.at(when, partial(reinforce, content, when))
        if pinned:
            when = created + timedelta(minutes=10)
            timeline.at(when, partial(pin, content, when))
    # A paraphrase arrives; its agent asks it to reinforce its near-duplicate instead of
    # piling up (by default a near-duplicate is kept: similar words may be new advice).
    when = DEMO_NOW - timedelta(hours=5)
    timeline.at(
        when,
        partial(
            lessons.add_lesson,
            store,
            "Always canary every deploy for at least fifteen minutes",
            now=when,
            actor=actor,
            scope="task:deploy-api",
            on_duplicate="reinforce",
        ),
    )


def _set_up_by_hand(store: Store, when: datetime) -> None:
    """What the developer wrote in the workbench on day one: the pinned slots."""
    slots.set_slot(
        store,
        "persona",
        "You are Atlas, a careful SRE agent. You explain what you changed and why, "
        "and you prefer small reversible steps.",
        description="Who the agent is",
        now=when,
        actor="tui",
    )
    slots.set_slot(
        store,
        "project/checkout",
        "Checkout service: Python 3.12, Postgres 16, deployed on Kubernetes. "
        "On-call rotation in #checkout-oncall. Error budget: 99.9% monthly.",
        description="What the agent works on",
        limit=400,
        now=when,
        actor="tui",
    )
    slots.set_slot(
        store,
        "corrections/user-feedback",
        "- Do not page the database team before 08:00 UTC.\n"
        "- Summaries should lead with the impact, then the cause.",
        description="Corrections the developer made",
        now=when,
        actor="tui",
    )


def _curate(store: Store, when: datetime) -> None:
    """What a developer did after the last checkpoint, so its diff has something to show."""
    by_text = {x["content"]: x["id"] for x in lessons.list_lessons(store, when, include_all=True)}
    lessons.forget(
        store,
        by_text["Old feature flags cause surprising behaviour; clean them up"],
        now=when,
        actor="tui",
    )
    lessons.set_pinned(
        store, by_text["Read the runbook before paging anyone"], True, now=when, actor="tui"
    )
    lessons.edit(
        store,
        by_text["Split pull requests over 400 lines"],
        content="Split pull requests over 400 changed lines",
        now=when,
        actor="tui",
    )
    lessons.add_lesson(
        store,
        "Prefer expand/contract migrations over renames",
        now=when,
        actor="tui",
        scope="task:write-migration",
        confidence=0.7,
        source="tui",
    )
    slots.append_slot(store, "persona", "Ask before deleting data.", now=when, actor="tui")
    rules.add_rule(store, "Prefer reversible changes; keep a rollback ready", now=when, actor="tui")
    rules.add_rule(
        store,
        "[AVOID] Editing production config by hand",
        now=when,
        actor="tui",
        scope="task:deploy-api",
    )


def _plan_review(store: Store, timeline: Timeline) -> None:
    """The developer turns the review queue on; atlas keeps proposing what to remember.

    Two proposals are decided (one approved, one rejected), five wait in the Review
    pane: lessons with a near-duplicate and a contradiction, and slot edits to diff.
    """
    agent = "cli:atlas"
    on = DEMO_NOW - timedelta(hours=4)
    timeline.at(on, partial(config.set_value, store, "review", "on", now=on, actor="tui"))
    proposals = [
        (
            210,
            "lesson",
            {"content": "Roll back at the first failed health check", "scope": "task:deploy-api"},
        ),
        (
            200,
            "lesson",
            {
                "content": "Page the database team whenever p99 latency rises",
                "scope": "task:triage-alert",
            },
        ),
        (
            150,
            "lesson",
            {
                "content": "Canary every deploy for fifteen minutes at least",
                "scope": "task:deploy-api",
            },
        ),
        (
            120,
            "lesson",
            {"content": "Never pin container images by digest", "scope": "task:deploy-api"},
        ),
        (90, "append", {"label": "persona", "text": "State the rollback plan before acting."}),
        (60, "replace", {"label": "project/checkout", "old": "Postgres 16", "new": "Postgres 17"}),
        (40, "lesson", {"content": "Summaries lead with the customer impact", "scope": "global"}),
    ]
    for minutes, kind, args in proposals:
        when = DEMO_NOW - timedelta(minutes=minutes)
        if kind == "lesson":
            action = partial(
                review.submit_lesson,
                store,
                args["content"],
                scope=args["scope"],
                now=when,
                actor=agent,
            )
        else:
            label = args.pop("label")
            action = partial(review.submit_slot, store, kind, label, now=when, actor=agent, **args)
        timeline.at(when, action)

    def decide(when: datetime) -> None:
        # The developer decides as the store's curator. The demo ships without a
        # registered curator, so whoever opens it decides with their own key (the
        # workbench registers it on the first decision).
        person = curator.Curator(curator.KEY_PREFIX + "demo-curator-key-" * 3)
        first, second = review.list_proposals(store, when)[:2]
        with store.transaction():
            store.put("meta", curator.DOC, {"id": curator.DOC, "key_sha256": person.digest})
            review.approve(
                store, first["id"], now=when, actor="tui", curator=person, replay=runner.replay
            )
            review.reject(
                store,
                second["id"],
                why="the database team is paged only after 08:00 UTC",
                now=when,
                actor="tui",
                curator=person,
            )
            store.delete("meta", [curator.DOC])

    decided = DEMO_NOW - timedelta(minutes=180)
    timeline.at(decided, partial(decide, decided))

    # The developer also asked to log what each context injects; atlas fetched two.
    timeline.at(on, partial(config.set_value, store, "context_log", "on", now=on, actor="tui"))

    def fetch_context(task: str, when: datetime) -> None:
        result = build_context(store, now=when, task_id=task)
        record_injections(store, result, now=when, actor=agent)

    for minutes, task in ((100, "deploy-api"), (20, "write-migration")):
        when = DEMO_NOW - timedelta(minutes=minutes)
        timeline.at(when, partial(fetch_context, task, when))


def _plan_sessions(store: Store, timeline: Timeline, session_ids: dict[str, str]) -> None:
    """Three atlas sessions (one still running) and a chatty cron agent."""
    plans = [
        (DEPLOY_SESSION, DEMO_NOW - timedelta(hours=21), True),
        (ALERT_SESSION, DEMO_NOW - timedelta(hours=3), True),
        (MIGRATE_SESSION, DEMO_NOW - timedelta(minutes=50), False),
    ]
    for n, (title, started, ended) in enumerate(plans):
        _plan_agent_session(store, timeline, session_ids, n, title, started, ended)
    _plan_cron_session(store, timeline, session_ids)


def _plan_agent_session(
    store: Store,
    timeline: Timeline,
    session_ids: dict[str, str],
    n: int,
    title: str,
    started: datetime,
    ended: bool,
) -> None:
    agent, project = "atlas", "checkout"
    actor = f"cli:{agent}"

    def step(when: datetime, action: Callable[..., object], *args: object, **kw: object) -> None:
        def run() -> None:
            action(store, session_ids[title], *args, now=when, actor=actor, **kw)

        timeline.at(when, run)

    def begin() -> None:
        session = sessions.start_session(
            store, agent_id=agent, project=project, title=title, now=started, actor=actor
        )
        session_ids[title] = session["id"]

    timeline.at(started, begin)
    for k in range(6 + n * 4):
        kind, text = SESSION_NOTES[(k + n) % len(SESSION_NOTES)]
        tags = NOTE_TAGS.get(kind, [])
        step(started + timedelta(minutes=3 * k), sessions.observe, text, kind=kind, tags=tags)
    at = started + timedelta(minutes=40)
    step(
        at,
        wm_task.update_task,
        task_id=title.split()[0].lower(),
        description=title,
        status="in_progress" if not ended else "done",
        current_step=3 + n,
        total_steps=8,
    )
    step(at, wm_keys.set_key, "branch", f"feature/{project}-{n + 1}")
    step(at, wm_keys.set_key, "pr", f"#{4120 + n}")
    for k in range(3 + n):
        when = at + timedelta(minutes=k + 1)
        step(when, wm_scratchpad.scratch_add, f"step {k + 1}: {SESSION_NOTES[k][1]}")
    step(
        at + timedelta(minutes=4 + n),
        wm_checkpoints.create_wm_checkpoint,
        description="before risky step",
    )
    if ended:
        step(started + timedelta(hours=2), sessions.end_session, summary=f"Done: {title.lower()}")
    else:
        # Live keys with TTLs so the Sessions pane shows a countdown.
        step(DEMO_NOW - timedelta(minutes=5), wm_keys.set_key, "lock_owner", "atlas", ttl=3600)
        step(DEMO_NOW - timedelta(minutes=2), wm_keys.set_key, "retry_after", "120", ttl=600)
        step(DEMO_NOW, wm_keys.set_key, "heartbeat", "ok", ttl=45)


def _plan_cron_session(store: Store, timeline: Timeline, session_ids: dict[str, str]) -> None:
    """A chatty cron agent with a small cap: the oldest observations were dropped."""
    started = DEMO_NOW - timedelta(days=4)
    actor = "cli:janitor"
    title = "Nightly log cleanup"

    def begin() -> None:
        session = sessions.start_session(
            store,
            agent_id="janitor",
            project="ops",
            title=title,
            now=started,
            actor=actor,
            max_observations=20,
        )
        session_ids[title] = session["id"]

    timeline.at(started, begin)
    for k in range(26):
        when = started + timedelta(seconds=20 * k)
        timeline.at(
            when,
            partial(
                _observe_in,
                store,
                session_ids,
                title,
                f"rotated /var/log/app/worker-{k}.log ({12 + k} MB)",
                when,
                actor,
            ),
        )
    when = started + timedelta(minutes=10)
    timeline.at(
        when,
        lambda: sessions.end_session(
            store,
            session_ids[title],
            summary="Rotated 26 logs, freed 650 MB",
            now=when,
            actor=actor,
        ),
    )


def _observe_in(
    store: Store, session_ids: dict[str, str], title: str, text: str, when: datetime, actor: str
) -> None:
    sessions.observe(
        store, session_ids[title], text, kind="tool", tags=["logs"], now=when, actor=actor
    )


if __name__ == "__main__":
    path = generate()
    print(f"demo store written to {path}")
