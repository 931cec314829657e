"""A seeded agent-memory set with known answers, for bench/bench_recall.py.

An agent's memory: sessions of observations (tool output, notes), episodes
(summary, mistakes) and lessons, about a few dozen services and hosts. Some
records carry a *fact* (an action on a named thing, with its detail); every
fact is asked about once, as an agent would ask: a question with question
words, other inflections of the fact's words ("rotated" -> "rotate"), only
some of its words, and now and then a typo. The answer is the record that
holds the fact; when the fact is told as a conversation (the subject in one
note, "rolled them back on db-3" in the next), the answer is the second note.
Distractors reuse the same verbs, objects and names in other combinations, and
chatter is full of question words, so no single word gives an answer away.

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


def generate(*, sessions: int = 60, notes: int = 40, seed: int = 22) -> Dataset:
    """``sessions`` sessions of about ``notes`` observations, episodes and lessons."""
    rng = random.Random(seed)
    records: list[Record] = []
    questions: list[Question] = []
    for s in range(sessions):
        task = f"{rng.choice(SERVICES)}-ops"
        for _ in range(notes):
            service, host = rng.choice(SERVICES), rng.choice(HOSTS)
            verb, obj, detail = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(DETAILS)
            roll = rng.random()
            if roll < 0.45:  # filler chatter
                records.append(Record("observation", rng.choice(FILLER), s, task=task))
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
