"""Recall quality and speed: memwork's search beside a plain BM25 engine, in one run.

Quality (R@1/5/10/20 and MRR; recall@k = the share of a question's answer records
among the first k hits, averaged over questions; MRR = 1/rank of the first answer,
0 past 20), memwork (``core.services.recall.search.search`` on a real store) and the baseline
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
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_synthetic import generate  # noqa: E402

from memwork.core.domain import episodes, lessons, sessions
from memwork.core.services.recall import search  # noqa: E402
from memwork.core.services.recall.follow import Recall  # noqa: E402
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
    """A folder store of ``records`` records, 100 to a session (at least 100 sessions: a
    session keeps at most 500 observations); returns the questions to ask it."""
    # About 2.1 records a note (log lines before it, conversations of two notes): a
    # few more than needed, then each session keeps its first ``records / sessions``.
    count = max(100, records // 100)
    data = generate(sessions=count, notes=max(1, records // (2 * count) + 2), seed=5)
    quota = [records // count + (s < records % count) for s in range(count)]
    kept: dict[int, int] = {}
    here = 0
    for i, rec in enumerate(data.records):
        here = rec.session if rec.session >= 0 else here  # a lesson counts for its session
        if quota[here] > 0:
            quota[here] -= 1
            kept[i] = len(kept)
    data.records[:] = [data.records[i] for i in kept]
    store = Store(path)
    sids = {}
    with store.transaction():
        for s in range(count):
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
    return [q.text for q in data.questions if all(a in kept for a in q.answers)]


OUT = ROOT / "bench" / "out"
#: Bumped whenever ``_fill`` or the generator changes what a cached store holds.
STORE_VERSION = 2


def cached_store(records: int) -> tuple[Path, list[str]]:
    """The benchmark store of ``records`` records (built once into ``bench/out``) and its
    questions."""
    folder = OUT / f"recall-v{STORE_VERSION}-{records}"
    questions = folder.with_suffix(".questions.json")
    if not questions.exists():
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        print(f"(building a store of {records:,} records in {folder} ...)", file=sys.stderr)
        asked = _fill(folder, records)
        shutil.rmtree(folder / "cache", ignore_errors=True)  # every run starts without an index
        questions.write_text(json.dumps(asked))
    return folder, json.loads(questions.read_text())


def linked_copy(src: Path, dst: Path) -> Path:
    """A copy whose files are hard links (a store replaces files, it never edits them)."""
    import shutil

    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, copy_function=os.link, ignore=shutil.ignore_patterns(".lock"))
    return dst


def _texts(store: Store) -> list[str]:
    """What the baseline indexes: every record's text, as recall's own fields hold it."""
    from memwork.core.services.recall import extract as units

    with store.reading():
        return [
            " ".join(text for _, text in unit.fields)
            for name in store.table_names()
            if units.indexed(name)
            for unit in units.units(name, store.docs(name).values())
        ]


class Timed:
    """CPU and wall milliseconds of repeated calls."""

    def __init__(self) -> None:
        self.cpu: list[float] = []
        self.wall: list[float] = []

    def __call__(self, fn: Callable[[], object]) -> None:
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        self.cpu.append((time.process_time() - c0) * 1000)
        self.wall.append((time.perf_counter() - w0) * 1000)

    def cell(self, which: str) -> str:
        values = getattr(self, which)
        return f"{statistics.median(values):.2f} / {_p95(values):.2f} ms"


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def latency(sizes: list[int], rounds: int, limit: int = 10) -> None:
    """``Memory.search`` in a long-lived process beside bm25s over the same texts."""
    print(
        f"| records | system | ready in | query (top {limit}) CPU p50 / p95 | wall p50 / p95 "
        "| observe, then the next query (CPU p50) |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    for size in sizes:
        _latency_at(size, rounds, limit)


def _latency_at(size: int, rounds: int, limit: int) -> None:
    import shutil

    from memwork import Memory

    source, questions = cached_store(size)
    store_path = linked_copy(source, OUT / f"recall-run-{size}")
    asked = questions[:rounds]
    memory = Memory(store_path, clock=lambda: NOW)
    t0 = time.perf_counter()
    memory.search("warm up")
    ready = time.perf_counter() - t0
    t0 = time.perf_counter()
    base = Baseline(_texts(memory.store))
    base_ready = time.perf_counter() - t0
    for q in questions[-20:]:  # warm-up, not counted
        memory.search(q)
        base.search(q, 10)
    ours, theirs = Timed(), Timed()
    for q in asked:  # one of each in turn, so a busy moment hits both alike
        ours(lambda q=q: memory.search(q, limit=limit))
        theirs(lambda q=q: base.search(q, limit))
    sid = memory.start_session(title="bench")["id"]
    writes, after = Timed(), Timed()
    for n, q in enumerate(asked[:50]):
        writes(lambda n=n, q=q: memory.observe(sid, f"observation {n}: {q}"))
        after(lambda q=q: memory.search(q, limit=limit))
    memory.close()
    print(
        f"| {size:,} | memwork `Memory.search` | {ready:.2f} s | {ours.cell('cpu')} "
        f"| {ours.cell('wall')} | {statistics.median(writes.cpu):.2f} + "
        f"{statistics.median(after.cpu):.2f} ms |"
    )
    print(
        f"| | plain BM25 (bm25s) | {base_ready:.2f} s | {theirs.cell('cpu')} "
        f"| {theirs.cell('wall')} | a full rebuild |",
        flush=True,
    )
    shutil.rmtree(store_path, ignore_errors=True)


def over_mcp(size: int, rounds: int) -> None:
    """MCP ``search`` through a real SDK client over stdio, beside a trivial echo tool
    served by the same SDK (``bench/echo_server.py``), one call of each in turn."""
    import anyio
    from mcp import Client, StdioServerParameters

    source, questions = cached_store(size)
    store_path = linked_copy(source, OUT / f"recall-mcp-{size}")
    exe = ROOT / ".venv" / "bin" / "memwork"
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(MEMWORK_FSYNC="0", MEMWORK_NOW=NOW.isoformat(), PYTHONPATH=str(ROOT))
    memwork = StdioServerParameters(
        command=str(exe), args=["--db", str(store_path), "mcp"], env=environ
    )
    echo = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "bench" / "echo_server.py")], env=environ
    )
    times: dict[str, list[float]] = {"echo": [], "search": []}

    async def call(client: Client, name: str, payload: dict[str, object]) -> float:
        start = time.perf_counter()
        result = await client.call_tool(name, payload)
        if result.is_error:
            raise RuntimeError(result.content[0].text)  # type: ignore[union-attr]
        return (time.perf_counter() - start) * 1000

    async def run() -> None:
        async with Client(echo, cache=None) as e, Client(memwork, cache=None) as m:
            await call(m, "search", {"query": "warm up"})  # builds the index
            for n, q in enumerate(questions[: rounds + 20]):
                pair = (
                    await call(e, "echo", {"text": q}),
                    await call(m, "search", {"query": q, "limit": 10}),
                )
                if n >= 20:
                    times["echo"].append(pair[0])
                    times["search"].append(pair[1])

    anyio.run(run)
    echo_p50 = statistics.median(times["echo"])
    search_p50 = statistics.median(times["search"])
    print("| records | MCP echo p50 | MCP `search` p50 / p95 | ratio to the echo |")
    print("|---:|---:|---:|---:|")
    print(
        f"| {size:,} | {echo_p50:.2f} ms | {search_p50:.2f} / {_p95(times['search']):.2f} ms "
        f"| {search_p50 / echo_p50:.2f}x |"
    )
    import shutil

    shutil.rmtree(store_path, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", nargs="*", type=int, metavar="N", help="records per store")
    ap.add_argument("--rounds", type=int, default=300, help="questions timed per store")
    ap.add_argument("--limit", type=int, default=10, help="hits per query (--latency)")
    ap.add_argument("--mcp", type=int, metavar="N", help="MCP search at N records")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument("--synthetic-only", action="store_true", help="skip the public sets")
    args = ap.parse_args(argv)
    if not args.no_quality:
        quality(public=not args.synthetic_only)
    if args.latency is not None:
        latency(args.latency or [10_000, 100_000], args.rounds, args.limit)
    if args.mcp:
        over_mcp(args.mcp, args.rounds)


if __name__ == "__main__":
    main()
