"""Recall quality and speed: memwork's search beside a plain BM25 engine, in one run.

Quality (R@1/5/10/20 and MRR; recall@k = the share of a question's answer records
among the first k hits, averaged over questions; MRR = 1/rank of the first answer,
0 past 20), memwork (``core.search.search`` on a real store) and the baseline
(bm25s with PyStemmer, English stop words, the records' whole text) side by side:

* **synthetic** (always): ``bench/recall_synthetic.py``, a seeded agent memory of
  observations, episodes and lessons with known answers; its tuning and held-out
  slices are reported apart. All kinds are searched.
* **REALTALK** (tuning chats and held-out chats apart) and **LoCoMo** (a check,
  never tuned on): long multi-session conversations with labelled evidence turns.
  One store per conversation, each turn an observation of its session, each
  question asked with ``kinds={"observation"}``, limit 20. They are not in the
  repository (REALTALK carries no licence; LoCoMo is CC BY-NC). Put them in a
  folder and name it in ``MEMWORK_RECALL_DATA`` (default ``bench/data/recall``):
  ``realtalk/Chat_*.json`` from github.com/danny911kr/REALTALK (``data/``) and
  ``locomo10.json`` from github.com/snap-research/LoCoMo (``data/``). Missing
  files are skipped with a note (CI has none).

Speed (``--latency``): ``Memory.search`` in a long-lived process on a folder store
of N records across 100 sessions (p50/p95 of 300 questions, after a warm-up), and
the cost of keeping the index current after an observe.

The baseline needs ``bm25s`` (``pip install 'memwork[bench]'``); the script
installs it into the running environment when it is missing.

    python bench/bench_recall.py                  # quality on every set present
    python bench/bench_recall.py --latency 10000 100000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_synthetic import generate  # noqa: E402

from memwork.core import episodes, lessons, search, sessions  # noqa: E402
from memwork.core.recall.follow import Recall  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

KS = (1, 5, 10, 20)
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DATA = Path(os.environ.get("MEMWORK_RECALL_DATA", ROOT / "bench" / "data" / "recall"))
REALTALK_TUNE = ("Chat_1_", "Chat_2_", "Chat_5_", "Chat_6_", "Chat_8_", "Chat_9_")


def need_bm25s() -> None:
    if importlib.util.find_spec("bm25s") is None:
        print("installing the baseline (bm25s) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "bm25s==0.3.16"], check=True)


class Baseline:
    """bm25s (k1 1.5, b 0.75), English stop words, Snowball stems: a plain BM25."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s
        import Stemmer

        self.bm25s, self.stemmer = bm25s, Stemmer.Stemmer("english")
        self.model = bm25s.BM25()
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.model.index(tokens, show_progress=False)
        self.n = len(texts)

    def search(self, query: str, k: int) -> list[int]:
        q = self.bm25s.tokenize(
            query, stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False
        )
        q = [[t for t in q[0] if t in self.model.vocab_dict]]
        if not q[0]:
            return []
        ids, scores = self.model.retrieve(q, k=min(k, self.n), show_progress=False, n_threads=1)
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]


class Tally:
    def __init__(self) -> None:
        self.hits = {k: 0.0 for k in KS}
        self.mrr = 0.0
        self.n = 0

    def add(self, ranked: list[str], answers: set[str]) -> None:
        for k in KS:
            self.hits[k] += len(answers.intersection(ranked[:k])) / len(answers)
        self.mrr += next((1 / r for r, x in enumerate(ranked[:20], 1) if x in answers), 0.0)
        self.n += 1

    def row(self) -> list[float]:
        n = self.n or 1
        return [self.hits[k] / n for k in KS] + [self.mrr / n]


# ---------------------------------------------------------------- synthetic


def synthetic() -> dict[str, dict[str, Tally]]:
    data = generate()
    store = Store.in_memory()
    refs: list[str] = []
    texts: list[str] = []
    sids: dict[int, str] = {}
    with store.transaction():
        for s in range(data.sessions):
            sids[s] = sessions.start_session(store, title=f"run {s}", now=NOW, actor="b")["id"]
        for i, rec in enumerate(data.records):
            at = NOW - timedelta(minutes=len(data.records) - i)
            if rec.kind == "observation":
                saved = sessions.observe(store, sids[rec.session], rec.text, now=at, actor="b")
                refs.append(f"{sids[rec.session]}/{saved['id']}")
                texts.append(rec.text)
            elif rec.kind == "episode":
                item = {
                    "task_id": rec.task,
                    "score": 0.4,
                    "steps": 3,
                    "summary": rec.text,
                    "mistakes": rec.mistakes,
                    "session_id": sids[rec.session],
                }
                refs.append(episodes.record_episodes(store, [item], now=at, actor="b")[0]["id"])
                texts.append(" ".join([rec.text, *rec.mistakes, rec.task]))
            else:
                wrote = lessons.add_lesson(
                    store, rec.text, now=at, actor="b", on_duplicate="keep-both"
                )
                refs.append(wrote.lesson["id"])
                texts.append(rec.text)
    recall = Recall()
    base = Baseline(texts)
    out: dict[str, dict[str, Tally]] = {}
    for q in data.questions:
        part = "synthetic held-out" if q.held_out else "synthetic tuning"
        tallies = out.setdefault(part, {"memwork": Tally(), "bm25": Tally()})
        answers = {refs[i] for i in q.answers}
        hits = search.search(store, q.text, now=NOW, limit=20, recall=recall)
        tallies["memwork"].add([h.id for h in hits], answers)
        tallies["bm25"].add([refs[i] for i in base.search(q.text, 20)], answers)
    return out


# ---------------------------------------------------------------- conversations


def _conversations(
    kind: str,
) -> list[tuple[str, list[tuple[str, int, str]], list[tuple[str, list[str]]]]]:
    """(name, turns as (uid, session, text), questions as (text, evidence uids))."""
    out = []
    if kind == "locomo":
        path = DATA / "locomo10.json"
        if not path.exists():
            return []
        samples = json.loads(path.read_text())
        items = [(str(s["sample_id"]), s["conversation"], s["qa"]) for s in samples]
    else:
        files = sorted((DATA / "realtalk").glob("Chat_*.json"))
        items = []
        for f in files:
            tune = f.name.startswith(REALTALK_TUNE)
            if (kind == "realtalk-tune") != tune:
                continue
            d = json.loads(f.read_text())
            items.append((f.stem, d, d["qa"]))
    for name, conv, qa in items:
        turns = []
        keys = sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k)), key=lambda k: int(k[8:])
        )
        for key in keys:
            if not isinstance(conv[key], list):
                continue
            for t in conv[key]:
                text = (t.get("clean_text") or t.get("text") or "").strip()
                if kind == "locomo" and t.get("blip_caption"):
                    text = f"{text} [shares {t['blip_caption']}]"
                if text:
                    turns.append((t["dia_id"], int(key[8:]), text))
        known = {u for u, _, _ in turns}
        questions = []
        for q in qa:
            evidence = [e for e in _evidence(q.get("evidence") or []) if e in known]
            if evidence:
                questions.append((q["question"], evidence))
        out.append((name, turns, questions))
    return out


def _evidence(items: list[str]) -> list[str]:
    found: list[str] = []
    for item in map(str, items):
        for m in re.finditer(r"D(\d+):(\d+)\s*-\s*D?(\d+)?:?(\d+)", item):
            s1, a, s2, b = int(m[1]), int(m[2]), int(m[3] or m[1]), int(m[4])
            if s1 == s2 and 0 <= b - a <= 40:
                found += [f"D{s1}:{n}" for n in range(a, b + 1)]
        rest = re.sub(r"D(\d+):(\d+)\s*-\s*D?(\d+)?:?(\d+)", " ", item)
        found += [f"D{m[1]}:{m[2]}" for m in re.finditer(r"D(\d+):(\d+)", rest)]
    return list(dict.fromkeys(found))


def conversations(kind: str) -> dict[str, Tally] | None:
    convs = _conversations(kind)
    if not convs:
        return None
    tallies = {"memwork": Tally(), "bm25": Tally()}
    for _name, turns, questions in convs:
        store = Store.in_memory()
        uid_of: dict[str, str] = {}
        with store.transaction():
            sids: dict[int, str] = {}
            for n, (uid, session, text) in enumerate(turns):
                if session not in sids:
                    sids[session] = sessions.start_session(
                        store, title=f"s{session}", now=NOW, actor="b"
                    )["id"]
                at = NOW + timedelta(seconds=n)
                saved = sessions.observe(store, sids[session], text, now=at, actor="b")
                uid_of[f"{sids[session]}/{saved['id']}"] = uid
        base = Baseline([t for _, _, t in turns])
        recall = Recall()
        for text, evidence in questions:
            hits = search.search(
                store,
                text,
                now=NOW + timedelta(days=1),
                kinds={"observation"},
                limit=20,
                recall=recall,
            )
            tallies["memwork"].add([uid_of[h.id] for h in hits], set(evidence))
            tallies["bm25"].add([turns[i][0] for i in base.search(text, 20)], set(evidence))
    return tallies


def quality(public: bool = True) -> None:
    need_bm25s()
    rows: list[tuple[str, str, int, list[float]]] = []
    for part, tallies in sorted(synthetic().items(), reverse=True):
        for system, tally in tallies.items():
            rows.append((part, system, tally.n, tally.row()))
    for kind, label in (
        ("realtalk-tune", "REALTALK tuning"),
        ("realtalk-heldout", "REALTALK held-out"),
        ("locomo", "LoCoMo (check)"),
    ):
        found = conversations(kind) if public else None
        if found is None:
            print(
                f"({label}: not found under {DATA}; see this script's docstring)", file=sys.stderr
            )
            continue
        for system, tally in found.items():
            rows.append((label, system, tally.n, tally.row()))
    print("| set | system | questions | R@1 | R@5 | R@10 | R@20 | MRR |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for part, system, n, row in rows:
        name = "memwork search" if system == "memwork" else "plain BM25 (bm25s)"
        print(f"| {part} | {name} | {n} | " + " | ".join(f"{v:.3f}" for v in row) + " |")


# ---------------------------------------------------------------- latency


def _fill(path: Path, records: int) -> list[str]:
    """A folder store of ``records`` records across 100 sessions (observations 70%,
    episodes 25%, lessons 5%); returns the questions to ask it."""
    data = generate(sessions=100, notes=max(1, records // 100), seed=5)
    store = Store(path)
    sids = {}
    with store.transaction():
        for s in range(100):
            sids[s] = sessions.start_session(store, title=f"run {s}", now=NOW, actor="b")["id"]
    batch: list[dict[str, object]] = []
    for start in range(0, len(data.records), 2000):
        with store.transaction():
            for i, rec in enumerate(data.records[start : start + 2000], start):
                at = NOW - timedelta(seconds=len(data.records) - i)
                if rec.kind == "episode":
                    batch.append(
                        {
                            "task_id": rec.task,
                            "score": 0.4,
                            "summary": rec.text,
                            "mistakes": rec.mistakes,
                            "session_id": sids[rec.session],
                        }
                    )
                elif rec.kind == "lesson":
                    lessons.add_lesson(store, rec.text, now=at, actor="b", on_duplicate="keep-both")
                else:
                    sid = sids[rec.session]
                    sessions.observe(store, sid, rec.text, now=at, actor="b")
            if batch:
                episodes.record_episodes(store, batch, now=NOW, actor="b")
                batch = []
    return [q.text for q in data.questions]


def latency(sizes: list[int]) -> None:
    from memwork import Memory

    print("| records | build (first search) | search p50 / p95 | observe | observe + next search |")
    print("|---:|---:|---:|---:|---:|")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "s"
            questions = _fill(path, size)[:320]
            memory = Memory(path, clock=lambda: NOW)
            t0 = time.perf_counter()
            memory.search("warm up")
            build = time.perf_counter() - t0
            for q in questions[:20]:
                memory.search(q)
            times = []
            for q in questions[20:]:
                t0 = time.perf_counter()
                memory.search(q, limit=10)
                times.append(time.perf_counter() - t0)
            sid = memory.start_session(title="bench")["id"]
            writes, after = [], []
            for n in range(30):
                t0 = time.perf_counter()
                memory.observe(sid, f"observation {n} about the {questions[n][:30]}")
                writes.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                memory.search(questions[n])
                after.append(time.perf_counter() - t0)
            p50 = statistics.median(times) * 1000
            p95 = statistics.quantiles(times, n=20)[-1] * 1000
            print(
                f"| {size:,} | {build:.2f} s | {p50:.2f} / {p95:.2f} ms | "
                f"{statistics.median(writes) * 1000:.2f} ms | "
                f"{statistics.median(after) * 1000:.2f} ms |",
                flush=True,
            )
            memory.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", nargs="*", type=int, metavar="N", help="records per store")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--synthetic-only", action="store_true", help="skip the public sets")
    args = ap.parse_args(argv)
    if not args.no_quality:
        quality(public=not args.synthetic_only)
    if args.latency is not None:
        latency(args.latency or [10_000, 100_000])


Runner = Callable[[], None]

if __name__ == "__main__":
    main()
