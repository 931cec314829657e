"""A seeded agent-memory set with known answers, for bench/bench_recall.py.

An agent's memory: sessions of observations (tool output, notes, chatter),
episodes (summary, mistakes) and lessons, about a few dozen services and
hosts. Some records carry a *fact* (an action on a named thing, with its
detail); every fact is asked about once, as an agent would ask: a question
with question words, other inflections of the fact's words ("rotated" ->
"rotate"), only some of its words, and now and then a typo. The answer is the
record that holds the fact; when the fact is told as a conversation (the
subject in one note, "rolled them back on db-3" in the next), the answer is the
second note. Distractors reuse the same verbs, objects and names in other
combinations, and chatter is full of question words, so no single word gives
an answer away.

The rest is what fills a working agent's log: test runs, file reads, greps,
errors with their paths and line numbers, tickets, commits, metrics, config
values and free notes, in words drawn from a few hundred of an engineer's
words by a Zipf law (a few very common, most rare), with numbers, paths,
hashes and ticket ids, and naming the same services and hosts as the facts.
So the vocabulary grows with the store as a real one does (about 4,300
distinct stems at 10,000 records, where 10,000 turns of the public chats hold
about 7,000); an earlier version drew its chatter from 20 fixed lines and held
about 200 stems at any size, so that every word was a common one. A question
still names common things (a host such as ``db-3`` is the words ``db`` and
``3``), as an agent's questions do.

Questions are split by their number: even ones are the *tuning* slice, odd
ones the *held-out* slice. Nothing in memwork was chosen by looking at the
held-out slice (the field weights were set before this set existed and were
checked on the tuning slice only).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SERVICES = [
    "billing",
    "checkout",
    "search",
    "ledger",
    "gateway",
    "inventory",
    "payments",
    "auth",
    "notifier",
    "scheduler",
    "exporter",
    "reports",
]
HOSTS = [f"{p}-{n}" for p in ("db", "web", "cache", "worker") for n in range(1, 7)]
# (base, past, -ing, question form) of each action
VERBS = [
    ("rotate", "rotated", "rotating", "rotate"),
    ("restart", "restarted", "restarting", "restart"),
    ("migrate", "migrated", "migrating", "migrate"),
    ("roll back", "rolled back", "rolling back", "roll back"),
    ("scale", "scaled", "scaling", "scale"),
    ("patch", "patched", "patching", "patch"),
    ("deploy", "deployed", "deploying", "deploy"),
    ("drain", "drained", "draining", "drain"),
    ("upgrade", "upgraded", "upgrading", "upgrade"),
    ("throttle", "throttled", "throttling", "throttle"),
]
OBJECTS = [
    ("credentials", "credential"),
    ("certificates", "certificate"),
    ("replicas", "replica"),
    ("indexes", "index"),
    ("queues", "queue"),
    ("connections", "connection"),
    ("caches", "cache"),
    ("schemas", "schema"),
    ("workers", "worker"),
    ("tokens", "token"),
]
DETAILS = [
    "because the error budget was burning",
    "after the pager fired twice",
    "to fix the latency spike",
    "before the quarterly audit",
    "while traffic was low",
    "as the runbook says",
    "to stop the memory leak",
    "after a failed health check",
    "to unblock the release train",
    "when the disk filled up",
]
FILLER = [
    "checked the dashboards",
    "waited for the alerts to clear",
    "opened a ticket",
    "posted an update in the channel",
    "reviewed the diff",
    "ran the smoke tests",
    "took a short break",
    "paired with the on-call engineer",
    "read the logs again",
    "the build is green",
    "nothing unusual in the metrics",
    "asked for a review",
    "what did we do about it?",
    "when did you want to look at this?",
    "how did it go?",
    "did you see what happened there?",
    "why did we do it that way?",
    "where was I?",
    "we did what we could",
    "I was going to ask you about that",
]
# An engineer's words for the log lines around the facts, most common first (drawn by
# a Zipf law, so a few are everywhere and most are rare).
WORDS = """
request response timeout retry error config test build deploy change update issue
check log run file value user data service fix need new old slow fast first last
failed passed green red flaky stable broken missing wrong right still again maybe
looks works seems probably next later today yesterday morning afternoon week
query index table column field row batch job cron queue topic message payload
header cookie session account tenant region zone cluster node pod container image
registry pipeline stage artifact release branch merge rebase conflict comment
approve fixture mock assert coverage lint format type module package dependency
version pin downgrade vulnerability audit trace span sample dashboard alert
incident postmortem ticket sprint backlog estimate estimate owner team handoff
memory leak heap stack thread lock mutex deadlock race pool socket port proxy
upstream downstream client server endpoint route handler middleware parser
serializer encoder decoder cache hit miss eviction ttl expiry warmup backfill
snapshot backup restore replica primary failover quorum leader election consensus
latency throughput bandwidth saturation utilisation budget quota limit burst spike
traffic load balancer ingress egress firewall rule policy role permission secret
vault key cert rotation expiry renewal signature hash digest checksum encoding
unicode utf timezone clock drift skew offset counter gauge histogram percentile
median average mean sum count rate ratio threshold window interval period minute
second hour day month quarter report export import sync async await callback
promise future task worker scheduler executor runner shard partition segment
compaction vacuum analyze explain plan scan seek join filter sort group limit
pagination cursor token bearer oauth scope consent login logout signup password
email notification webhook event stream consumer producer broker subscriber
publisher channel bus kafka rabbit redis postgres mysql sqlite mongo elastic
nginx envoy docker kubernetes helm terraform ansible jenkins github gitlab
python golang rust typescript java node django flask fastapi react vue webpack
pytest unittest jest mypy ruff black eslint prettier coverage bench profile
flame graph cpu disk io network packet loss jitter dns tls handshake certificate
chain root intermediate revoked expired valid invalid malformed truncated corrupt
empty null undefined none default override fallback feature flag rollout canary
blue percent gradual ramp pause resume abort cancel retry backoff jitter circuit
breaker bulkhead shed degrade recover heal restart crash panic exception abort
signal kill terminate graceful shutdown startup boot init probe readiness liveness
health heartbeat ping pong echo noop placeholder todo fixme hack workaround
refactor cleanup rename move extract inline split combine simplify document
explain describe summarize outline draft proposal design review decision record
tradeoff option alternative choice prefer avoid keep drop remove add create
delete update insert upsert replace patch apply revert rollback forward migrate
customer invoice order cart product price discount coupon tax shipping address
refund charge subscription plan trial renewal churn signup onboarding profile
search ranking relevance recall precision embedding vector similarity cluster
model training inference prompt context window token budget temperature sample
""".split()
ERRORS = [
    "TimeoutError",
    "KeyError",
    "ValueError",
    "ConnectionResetError",
    "PermissionError",
    "OperationalError",
    "IntegrityError",
    "JSONDecodeError",
    "AssertionError",
    "OOMKilled",
    "ECONNREFUSED",
    "DeadlineExceeded",
]
COMMANDS = [
    "pytest",
    "make test",
    "kubectl rollout status",
    "terraform plan",
    "npm test",
    "go test",
]
FOLDERS = ["src", "lib", "tests", "deploy", "config", "scripts", "docs"]
EXTENSIONS = ["py", "ts", "go", "yaml", "sql", "md", "json"]
PROJECTS = ["OPS", "INC", "PLAT", "SEC", "DATA"]
QUESTION = [
    "When did we {verb} the {obj} on {host}?",
    "Why did I {verb} the {service} {obj}?",
    "what happened when the {service} {obj} were {past}",
    "did we ever {verb} {obj} for {service} on {host}",
    "How did the {service} {obj_one} {verb} go on {host}?",
    "{service} {obj} {ing} {host}",
]


@dataclass
class Record:
    """One memory: its kind, its text fields, and the session it belongs to."""

    kind: str  # observation, episode, lesson
    text: str
    session: int = -1
    mistakes: list[str] = field(default_factory=list)
    task: str = "ops"


@dataclass
class Question:
    """A question and the records that answer it (positions in ``Dataset.records``)."""

    qid: int
    text: str
    answers: list[int]

    @property
    def held_out(self) -> bool:
        return self.qid % 2 == 1


@dataclass
class Dataset:
    """The records (in recording order) and the questions."""

    records: list[Record]
    questions: list[Question]
    sessions: int


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 6:
        return word
    i = rng.randrange(1, len(word) - 2)
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # swap two neighbours


_VOCAB = list(dict.fromkeys(WORDS))
_ZIPF = [1 / rank for rank in range(1, len(_VOCAB) + 1)]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(_VOCAB, weights=_ZIPF, k=n))


def _path(rng: random.Random) -> str:
    a, b, c = rng.choices(_VOCAB, weights=_ZIPF, k=3)
    return f"{rng.choice(FOLDERS)}/{a}/{b}_{c}.{rng.choice(EXTENSIONS)}"


def _log_line(rng: random.Random) -> str:
    """One line of an agent's working log, about no fact anyone asks for."""
    service, host = rng.choice(SERVICES), rng.choice(HOSTS)
    n = int(rng.paretovariate(1.2) * 3)
    form = rng.randrange(10)
    if form == 0:
        return (
            f"ran {rng.choice(COMMANDS)} {_path(rng)}: {n} passed, {rng.randrange(4)} failed "
            f"in {rng.randrange(1, 90)}.{rng.randrange(10)}s"
        )
    if form == 1:
        return f"read {_path(rng)} ({rng.randrange(20, 2000)} lines): {_words(rng, 4)}"
    if form == 2:
        a, b = rng.choices(_VOCAB, weights=_ZIPF, k=2)
        return f"grep {a}_{b} found {n} matches in {_path(rng)}"
    if form == 3:
        return (
            f"{rng.choice(ERRORS)} in {_path(rng)}:{rng.randrange(1, 900)} "
            f"while {_words(rng, 3)} on {host}"
        )
    if form == 4:
        return (
            f"opened {rng.choice(PROJECTS)}-{rng.randrange(100, 9999)}: "
            f"{_words(rng, 4)} in {service}"
        )
    if form == 5:
        return f"commit {rng.getrandbits(28):07x} {_words(rng, 5)}"
    if form == 6:
        return (
            f"{service} p99 {rng.randrange(5, 3000)}ms on {host}, "
            f"{rng.randrange(1, 100)}% {_words(rng, 2)}"
        )
    if form == 7:
        a, b = rng.choices(_VOCAB, weights=_ZIPF, k=2)
        return f"{service} config {a}_{b} = {rng.randrange(1, 10000)}"
    if form == 8:
        status = rng.choice([200, 201, 400, 403, 404, 409, 429, 500, 502, 503])
        route = _words(rng, 2).replace(" ", "/")
        return f"HTTP {status} from /api/{route} after {rng.randrange(1, 5000)}ms"
    return f"note: {_words(rng, rng.randrange(4, 14))}"


def generate(
    *, sessions: int = 60, notes: int = 40, seed: int = 22, log_lines: float = 1.0
) -> Dataset:
    """``sessions`` sessions of about ``notes`` observations, episodes and lessons, and
    about ``log_lines`` lines of working log before each of them."""
    rng = random.Random(seed)
    # The log lines draw from their own generator, so the facts and questions are the
    # same whatever the filler says.
    noise = random.Random(seed * 7919 + 1)
    records: list[Record] = []
    questions: list[Question] = []
    for s in range(sessions):
        task = f"{rng.choice(SERVICES)}-ops"
        for _ in range(notes):
            while noise.random() < log_lines / (1 + log_lines):  # on average log_lines
                records.append(Record("observation", _log_line(noise), s, task=task))
            service, host = rng.choice(SERVICES), rng.choice(HOSTS)
            verb, obj, detail = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(DETAILS)
            roll = rng.random()
            if roll < 0.45:  # filler: chatter a third of the time, else the working log
                chatter = rng.choice(FILLER)
                text = chatter if noise.random() < 0.35 else _log_line(noise)
                records.append(Record("observation", text, s, task=task))
                continue
            text = f"{verb[1].capitalize()} the {service} {obj[0]} on {host} {detail}"
            answers = [len(records)]
            if roll < 0.6:  # a conversation: the subject in one note, what was done in the next
                records.append(Record("observation", f"what about the {service} {obj[0]}?", s))
                text = f"{verb[1]} them on {host} {detail}"
                answers.append(len(records))
                records.append(Record("observation", text, s, task=task))
            elif roll < 0.8:
                records.append(Record("observation", text, s, task=task))
            elif roll < 0.93:
                mistake = f"Forgot to {rng.choice(VERBS)[0]} the {rng.choice(OBJECTS)[0]} first"
                records.append(Record("episode", text, s, [mistake], task=task))
            else:
                lesson = f"When {verb[2]} {service} {obj[0]}, check {host} {detail}"
                records.append(Record("lesson", lesson, -1, task=task))
            if rng.random() < 0.35:  # this record is a fact someone will ask about
                form = rng.choice(QUESTION)
                question = form.format(
                    verb=verb[3],
                    past=verb[1],
                    ing=verb[2],
                    obj=obj[0],
                    obj_one=obj[1],
                    service=service,
                    host=host,
                )
                if rng.random() < 0.15:
                    words = question.split()
                    k = rng.randrange(len(words))
                    words[k] = _typo(words[k], rng)
                    question = " ".join(words)
                questions.append(Question(len(questions), question, answers[-1:]))
    return Dataset(records, questions, sessions)
