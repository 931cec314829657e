"""Recall quality and speed: memwork's search beside other engines, in one run.

Quality (``python bench/bench_recall.py``): every system answers the same
questions over the same turns, and R@1/5/10/20 and MRR are reported per set,
slice, level and question category (bench/recall_metrics.py says how each is
counted). The systems (bench/recall_baselines.py): memwork
(``core.services.recall.search.search`` on a real store: one store per
conversation, each turn an observation of its session written at the session's date
where the set gives one, asked a day after the last, with
``kinds={"observation"}``, the embedder off), bm25s, SQLite FTS5, tantivy,
WordLlama 256-d and a reciprocal rank fusion of bm25s and WordLlama.

The sets (bench/recall_sets.py, which also gives each slice rule):

* **synthetic** (always there): ``bench/recall_synthetic.py``, a seeded agent
  memory of observations, episodes and lessons; every kind is searched; level
  ``record``.
* **locomo**, **realtalk**, **longmemeval**: public multi-session conversations
  with labelled evidence, read from ``MEMWORK_RECALL_DATA`` (default
  ``bench/data/recall``, git-ignored); ``bench/get_recall_data.sh`` says where
  each file comes from. Missing files are skipped with a note. Levels: ``turn``
  (the evidence turns) and ``session`` (the evidence sessions, each ranked by its
  best turn).
* **locomo-long**, **locomo-facts**: LoCoMo's conversations with a long reply after
  every line, and LoCoMo's own facts drawn from each session as the records
  (bench/recall_locomo_facts.py); LoCoMo's questions and slices.
* **memdaily**, **madial**, **madial-zh**: short Chinese facts told over days
  (bench/recall_memdaily.py), and memories recalled from a dialogue, in English and
  Chinese (bench/recall_madial.py); level ``turn`` only.
* **longmemeval-wide** (only with ``--sets``): LongMemEval's questions, each haystack
  filled to 500 sessions (~5,000 turns) from the other questions' sessions that answer
  nothing: the scale of LongMemEval_M.

``--tuning-only`` computes and prints the tuning slices only: tune with it, and
look at the held-out slices only to report. ``--sets locomo,longmemeval``
chooses sets, ``--systems memwork,bm25s`` systems (a quicker loop);
``--per-category N`` sizes LongMemEval's sample; ``--json FILE`` writes every
number.

``--harness`` stores the conversations as another harness might (comma-separated,
the public sets only): ``one-session`` (a whole conversation in one memwork session,
its cap raised to hold every turn), ``turn-sessions`` (each turn its own session),
``undated`` (no set dates: a second apart, asked a day after the last turn),
``speakers`` (every system's turns begin with their speaker's name or role),
``session-docs`` (each conversation session one record, its turns joined, for every
system: only the session level is reported). Without it, one memwork session per
conversation session, at the set's dates.

Speed (``--latency N ...``): ``Memory.search`` in a long-lived process on a folder
store of N records, beside bm25s and tantivy over the very same texts in the same
process (p50/p95 of 300 questions after a warm-up, and after the first background
save of the index built in the process has landed: ``--no-settle`` times them while
it runs, its CPU counted against the queries), on three kinds of store
(``--shapes``): ``mixed`` (the synthetic agent memory: notes, episodes and
lessons of ~60 characters; also times an observe and the next query), ``long``
(notes of ~950 characters, the length of a chat assistant's reply) and ``short``
(notes of 120 to 300). Stores are built once and cached in ``bench/out/``. With
``--passages`` the queries are passages instead of questions: MADial-Bench's 160
dialogues as its queries are (~600 characters of chat, most of whose words no store
holds; the data from ``bench/get_recall_data.sh``), 20 to warm up and the rest timed.

Missing engines (bm25s, PyStemmer, tantivy, wordllama) are installed into the
running environment at the pins of the ``bench`` extra.

    python bench/bench_recall.py                      # quality on every set present
    python bench/bench_recall.py --tuning-only --sets locomo,longmemeval
    python bench/bench_recall.py --no-quality --latency 10000 100000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import recall_baselines as engines  # noqa: E402
import recall_sets  # noqa: E402
from http_search_fill import fill  # noqa: E402
from recall_metrics import ALL, KS, Board, paired_gap, session_ranking  # noqa: E402
from recall_synthetic import generate  # noqa: E402
from store_copy import linked_copy  # noqa: E402
from tree_code import require_this_tree  # noqa: E402

from memwork.core.base.errors import InvalidInput  # noqa: E402
from memwork.core.domain import episodes, lessons, sessions  # noqa: E402
from memwork.core.services.recall import search  # noqa: E402
from memwork.core.services.recall.follow import Recall  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

require_this_tree(ROOT)  # a checkout measured with another's code says so

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DATA = Path(os.environ.get("MEMWORK_RECALL_DATA", ROOT / "bench" / "data" / "recall"))
FETCH = 100  # turns each system returns: the turn level reads 20, the session level all
SYSTEMS = ("memwork", "bm25s", "fts5", "tantivy", "wordllama", "bm25s+wordllama")
ENGINES = {
    "bm25s": engines.Bm25s,
    "fts5": engines.Fts5,
    "tantivy": engines.Tantivy,
    "wordllama": engines.WordLlama,
}
LABELS = {
    "memwork": "memwork search",
    "bm25s": "bm25s (BM25)",
    "fts5": "SQLite FTS5",
    "tantivy": "tantivy",
    "wordllama": "WordLlama 256-d",
    "bm25s+wordllama": "RRF bm25s + WordLlama",
}


#: The ways ``--harness`` can store a conversation other than the default.
HARNESSES = ("one-session", "turn-sessions", "undated", "speakers", "session-docs")


class Memwork:
    """memwork's search over a store of the turns: one session per conversation session,
    each turn an observation, in order, a second apart (from its session's date, where
    the set gives one); ``harness`` (of :data:`HARNESSES`) changes the sessions and
    dates as another harness might."""

    def __init__(
        self,
        turns: list[tuple[str, str, str]],
        times: list[datetime] | None = None,
        asked: datetime | None = None,
        harness: frozenset[str] = frozenset(),
    ) -> None:
        self.store = Store.in_memory()
        self.index_of: dict[str, int] = {}
        self.skipped = 0
        sids: dict[str, str] = {}
        if "one-session" in harness:
            turns = [(u, "all", t) for u, _, t in turns]
        elif "turn-sessions" in harness:
            turns = [(u, str(n), t) for n, (u, _, t) in enumerate(turns)]
        if "undated" in harness:
            times = asked = None
        cap = max(500, len(turns)) if "one-session" in harness else None
        with self.store.transaction():
            for n, (_uid, session, text) in enumerate(turns):
                if session not in sids:
                    sids[session] = sessions.start_session(
                        self.store,
                        title=f"s{session}",
                        now=NOW,
                        actor="b",
                        # A session keeps 500 observations by default, the oldest dropped
                        # past it: a harness that stores a whole chat in one raises it.
                        max_observations=cap,
                    )["id"]
                # A set's own dates where it has them (a second apart within a session,
                # so the turns keep their order), else a second apart from NOW.
                at = (times[n] if times else NOW) + timedelta(seconds=n)
                try:
                    saved = sessions.observe(self.store, sids[session], text, now=at, actor="b")
                except InvalidInput:  # nothing left once private parts are scrubbed
                    self.skipped += 1
                    continue
                self.index_of[f"{sids[session]}/{saved['id']}"] = n
        self.recall = Recall()
        self.asked_at = asked or NOW + timedelta(seconds=len(turns), days=1)

    def search(self, query: str, k: int) -> list[int]:
        hits = search.search(
            self.store,
            query,
            now=self.asked_at,
            kinds={"observation"},
            limit=k,
            recall=self.recall,
        )
        return [self.index_of[h.id] for h in hits]


class Clock:
    """Seconds spent per system (building and asking), to say where a run's time goes."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}

    def run(self, system: str, fn: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        out = fn(*args)
        self.spent[system] = self.spent.get(system, 0.0) + time.perf_counter() - t0
        return out


def build_engines(texts: list[str], clock: Clock, chosen: tuple[str, ...]) -> dict[str, Any]:
    """The chosen engines other than memwork over ``texts`` (the fusion's parts are built
    for it, and reported only when chosen too)."""
    needed = set(chosen) | ({"bm25s", "wordllama"} if "bm25s+wordllama" in chosen else set())
    built = {name: clock.run(name, cls, texts) for name, cls in ENGINES.items() if name in needed}
    if "bm25s+wordllama" in chosen:
        built["bm25s+wordllama"] = engines.Fusion(built["bm25s"], built["wordllama"])
    return {name: engine for name, engine in built.items() if name in chosen}


# ---------------------------------------------------------------- synthetic


def synthetic(
    clock: Clock, tuning_only: bool, chosen: tuple[str, ...]
) -> tuple[dict[str, Board], dict[str, dict[str, int]]]:
    """The seeded agent memory: every kind of record searched, level ``record``."""
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
    built = build_engines(texts, clock, chosen)
    recall = Recall()
    boards: dict[str, Board] = {}
    sizes: dict[str, dict[str, int]] = {}
    for q in data.questions:
        if tuning_only and q.held_out:
            continue
        part = recall_sets.HELD_OUT if q.held_out else recall_sets.TUNING
        sizes.setdefault(part, {"records": len(texts), "questions": 0})["questions"] += 1
        board = boards.setdefault(part, Board())
        answers = {refs[i] for i in q.answers}
        if "memwork" in chosen:
            hits = clock.run(
                "memwork", partial(search.search, store, q.text, now=NOW, limit=20, recall=recall)
            )
            board.add("record", ALL, "memwork", [h.id for h in hits], answers)
        for name, engine in built.items():
            ranked = clock.run(name, engine.search, q.text, 20)
            board.add("record", ALL, name, [refs[i] for i in ranked], answers)
    return boards, sizes


# ---------------------------------------------------------------- conversations


def conversations(
    convs: list[recall_sets.Conversation],
    clock: Clock,
    chosen: tuple[str, ...],
    harness: frozenset[str] = frozenset(),
) -> tuple[Board, dict[str, int]]:
    """Every system on every conversation of a slice: turn and session levels."""
    board = Board()
    size = {"conversations": 0, "turns": 0, "questions": 0, "unstored turns": 0}
    for conv in convs:
        if not conv.questions:
            continue
        if "speakers" in harness:
            conv = recall_sets.with_speakers(conv)
        if "session-docs" in harness:
            conv = recall_sets.as_session_documents(conv)
        texts = [t for _, _, t in conv.turns]
        built: dict[str, Any] = {}
        if "memwork" in chosen:
            built["memwork"] = clock.run(
                "memwork", Memwork, conv.turns, conv.times, conv.asked, harness
            )
        built.update(build_engines(texts, clock, chosen))
        size["conversations"] += 1
        size["turns"] += len(conv.turns)
        size["questions"] += len(conv.questions)
        if "memwork" in built:
            size["unstored turns"] += built["memwork"].skipped
        uids = [u for u, _, _ in conv.turns]
        session_of = {u: s for u, s, _ in conv.turns}
        for q in conv.questions:
            for name, engine in built.items():
                ranked = [uids[i] for i in clock.run(name, engine.search, q.text, FETCH)]
                if "session-docs" not in harness:
                    board.add("turn", q.category, name, ranked[:20], q.turns)
                if conv.session_level:
                    ranked_sessions = session_ranking(ranked, session_of.get)
                    board.add("session", q.category, name, ranked_sessions, q.sessions)
    return board, size


# ---------------------------------------------------------------- report


def table(board: Board, level: str) -> list[str]:
    """The level's table: every system over all questions, then R@10 by category."""
    head = "| system | questions | " + " | ".join(f"R@{k}" for k in KS) + " | MRR |"
    lines = [head, "|---|---:|" + "---:|" * (len(KS) + 1)]
    for system in board.systems():
        tally = board.get(level, ALL, system)
        if tally is None:
            continue
        cells = " | ".join(f"{v:.3f}" for v in tally.row())
        lines.append(f"| {LABELS.get(system, system)} | {tally.n:,} | {cells} |")
    lines += _gaps(board, level)
    cats = board.categories(level)[1:]
    if len(cats) > 1:
        systems = board.systems()
        lines += ["", "R@10 by category:", ""]
        lines.append("| category | questions | " + " | ".join(LABELS[s] for s in systems) + " |")
        lines.append("|---|---:|" + "---:|" * len(systems))
        for cat in cats:
            row = [board.get(level, cat, s) for s in systems]
            n = next((t.n for t in row if t), 0)
            cells = " | ".join(f"{t.row()[KS.index(10)]:.3f}" if t else "—" for t in row)
            lines.append(f"| {cat} | {n:,} | {cells} |")
    return lines


def _gaps(board: Board, level: str) -> list[str]:
    """memwork against the best other system at R@10 and at MRR: the gap and its 95%
    interval (paired bootstrap over the questions)."""
    ours = board.get(level, ALL, "memwork")
    if ours is None:
        return []
    others = [
        (system, tally)
        for system in board.systems()
        if system != "memwork"
        and (tally := board.get(level, ALL, system)) is not None
        and tally.n == ours.n  # the same questions: paired
    ]
    if not others:
        return []
    out = [""]
    for which, name, col in ((0, "R@10", KS.index(10)), (1, "MRR", len(KS))):
        system, best = max(others, key=lambda st: st[1].row()[col])
        gap, low, high = paired_gap(ours, best, which)
        out.append(
            f"memwork against the best other at {name} ({LABELS.get(system, system)}): "
            f"{gap:+.3f}, 95% interval [{low:+.3f}, {high:+.3f}] (paired bootstrap)"
        )
    return out


def as_json(board: Board) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for (level, cat, system), tally in board.tallies.items():
        row = tally.row()
        cell = {f"R@{k}": row[i] for i, k in enumerate(KS)} | {"MRR": row[-1], "n": tally.n}
        out.setdefault(level, {}).setdefault(cat, {})[system] = cell
    return out


def quality(
    sets: list[str],
    tuning_only: bool,
    per_category: int,
    chosen: tuple[str, ...] = SYSTEMS,
    harness: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Run the sets, print a table per set, slice and level; return every number."""
    engines.need("bm25s", "Stemmer", "tantivy", "wordllama")
    os.environ.setdefault("MEMWORK_EMBEDDER", "off")
    if os.environ["MEMWORK_EMBEDDER"] != "off":
        print(f"(memwork runs with MEMWORK_EMBEDDER={os.environ['MEMWORK_EMBEDDER']})")
    if harness:
        print(f"(the public sets stored with --harness {','.join(sorted(harness))})")
    report: dict[str, Any] = {}
    for name in sets:
        clock = Clock()
        t0 = time.perf_counter()
        if name == "synthetic":
            boards, sizes = synthetic(clock, tuning_only, chosen)
        else:
            parts = recall_sets.load(name, DATA, per_category)
            if not parts:
                print(f"\n({name}: no data under {DATA}; see bench/get_recall_data.sh)")
                continue
            boards, sizes = {}, {}
            for part, convs in parts.items():
                if tuning_only and part != recall_sets.TUNING:
                    continue
                boards[part], sizes[part] = conversations(convs, clock, chosen, harness)
        spent = time.perf_counter() - t0
        report[name] = {
            "seconds": round(spent, 1),
            "system seconds": {k: round(v, 1) for k, v in clock.spent.items()},
        }
        for part, board in boards.items():
            report[name][part] = {"size": sizes[part], "levels": as_json(board)}
            size = ", ".join(
                f"{v:,} {k}" for k, v in sizes[part].items() if v or k != "unstored turns"
            )
            for level in board.levels():
                mark = " (HELD OUT)" if part == recall_sets.HELD_OUT else ""
                print(f"\n#### {name}, {part}{mark}, {level} level ({size})\n")
                print("\n".join(table(board, level)), flush=True)
        per = ", ".join(
            f"{k} {v:.0f} s" for k, v in sorted(clock.spent.items(), key=lambda kv: -kv[1])
        )
        print(f"\n({name}: {spent:.0f} s; {per})", flush=True)
    return report


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
#: The same for the ``long`` and ``short`` stores.
SHAPED_VERSION = 1


def _built_once(
    folder: Path, what: str, build: Callable[[Path], list[str]]
) -> tuple[Path, list[str]]:
    """``folder`` as ``build`` fills it (once: its questions file, written last, says it
    is done), without a recall index, and the questions ``build`` returned. A folder
    removed since is built again (opening it would make an empty store)."""
    import shutil

    questions = folder.with_suffix(".questions.json")
    if not questions.exists() or not (folder / "store.json").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        print(f"(building a store of {what} in {folder} ...)", file=sys.stderr)
        asked = build(folder)
        shutil.rmtree(folder / "cache", ignore_errors=True)  # every run starts without an index
        questions.write_text(json.dumps(asked))
    return folder, json.loads(questions.read_text())


def cached_store(records: int) -> tuple[Path, list[str]]:
    """The benchmark store of ``records`` records (built once into ``bench/out``) and its
    questions."""
    folder = OUT / f"recall-v{STORE_VERSION}-{records}"
    return _built_once(folder, f"{records:,} records", lambda f: _fill(f, records))


#: Text lengths of the ``long`` and ``short`` stores: (join texts until at least, never past).
SHAPES = {"long": (920, 1000), "short": (120, 300)}


def _shaped_texts(records: int, shape: str) -> tuple[list[str], list[str]]:
    """``records`` texts of the shape, each the synthetic memory's consecutive texts
    joined until it is as long as the shape's least, never past its most (cut at a
    word), and the synthetic questions."""
    least, most = SHAPES[shape]
    pool_size = min(200_000, max(20_000, records * least // 50))
    data = generate(sessions=100, notes=max(1, pool_size // 200), seed=7)
    pool = [rec.text for rec in data.records]
    texts: list[str] = []
    at = 0
    while len(texts) < records:
        parts: list[str] = []
        size = -1
        while True:
            nxt = pool[at % len(pool)]
            if parts and (size >= least or size + 1 + len(nxt) > most):
                break
            parts.append(nxt)
            size += 1 + len(nxt)
            at += 1
        text = " ".join(parts)
        if len(text) > most:
            text = text[:most].rsplit(" ", 1)[0]
        texts.append(text)
    return texts, [q.text for q in data.questions]


def cached_shaped_store(records: int, shape: str) -> tuple[Path, list[str]]:
    """A folder store of ``records`` notes of the shape (100 to a session), built once into
    ``bench/out`` and keyed by both, and its questions."""
    folder = OUT / f"recall-{shape}-v{SHAPED_VERSION}-{records}"
    return _built_once(
        folder, f"{records:,} {shape} notes", lambda f: _fill_shaped(f, records, shape)
    )


def _fill_shaped(folder: Path, records: int, shape: str) -> list[str]:
    texts, asked = _shaped_texts(records, shape)
    fill(folder, texts)
    return asked


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


def latency(
    sizes: list[int],
    rounds: int,
    limit: int,
    shapes: list[str],
    settle: bool = True,
    passages: list[str] | None = None,
) -> list[dict]:
    """``Memory.search`` in a long-lived process beside bm25s and tantivy over the same
    texts, at each size and shape; returns the figures."""
    engines.need("bm25s", "Stemmer", "tantivy")
    print(
        f"| records | texts | system | ready in | query (top {limit}) CPU p50 / p95 "
        "| wall p50 / p95 | observe, then the next query (CPU p50) |"
    )
    print("|---:|---|---|---:|---:|---:|---:|")
    rows: list[dict] = []
    for size in sizes:
        for shape in shapes:
            rows.append(_latency_at(size, shape, rounds, limit, settle, passages))
    print()
    print("| records | texts | memwork / tantivy CPU p50 | memwork / bm25s CPU p50 |")
    print("|---:|---|---:|---:|")
    for row in rows:
        cpu = row["cpu p50 ms"]
        print(
            f"| {row['records']:,} | {row['shape']} | {cpu['memwork'] / cpu['tantivy']:.1f}x "
            f"| {cpu['memwork'] / cpu['bm25s']:.1f}x |"
        )
    return rows


def _settled(memory: Any, most: float = 600.0) -> float:
    """Wait until ``memory``'s kept recall index owes no save (the first save of an index
    built in the process runs in the background, ~20 s at 100k records, and its CPU is
    the process's: timed queries would be charged for it); returns the seconds waited."""
    t0 = time.perf_counter()
    lock, recall = search.kept_recall(memory.store)
    while time.perf_counter() - t0 < most:
        saver = search.saver_of(memory.store)
        with lock:
            due = recall.save_due()
        if due is None and (saver is None or not saver.saving):
            break
        time.sleep(0.5)
    return time.perf_counter() - t0


def _keep_index_file(copy: Path, source: Path) -> None:
    """The copy's saved recall index into the prepared store it was copied from, when
    the copy had to build it (the source's file was missing or of an older format):
    the next run then reads it, as the "ready in" column means, rather than building."""
    fresh = copy / "cache" / "recall" / "index.bin"
    kept = source / "cache" / "recall" / "index.bin"
    if not fresh.exists() or (kept.exists() and os.path.samefile(fresh, kept)):
        return
    kept.parent.mkdir(parents=True, exist_ok=True)
    spare = kept.with_name(kept.name + ".new")
    spare.unlink(missing_ok=True)
    os.link(fresh, spare)  # the copy goes when the run ends: its file stays, linked here
    os.replace(spare, kept)


def madial_passages() -> list[str]:
    """MADial-Bench's English dialogues as its queries are, in the file's order (empty
    when its files are missing)."""
    import recall_madial

    parts = recall_madial.load(DATA / "madial", "en")
    asked = {q.qid: q.text for convs in parts.values() for c in convs for q in c.questions}
    return [asked[k] for k in sorted(asked, key=lambda k: int(k.split("#")[1]))]


def _latency_at(
    size: int,
    shape: str,
    rounds: int,
    limit: int,
    settle: bool = True,
    passages: list[str] | None = None,
) -> dict:
    import shutil

    from memwork import Memory

    if shape == "mixed":
        source, questions = cached_store(size)
    else:
        source, questions = cached_shaped_store(size, shape)
    store_path = linked_copy(source, OUT / f"recall-run-{shape}-{size}")
    if passages:  # the first 20 warm up, below
        questions = [*passages[20:], *passages[:20]]
    asked = questions[:rounds]
    memory = Memory(store_path, clock=lambda: NOW)
    t0 = time.perf_counter()
    memory.search("warm up")
    ready = {"memwork": time.perf_counter() - t0}
    texts = _texts(memory.store)
    others: dict[str, Any] = {}
    for name, cls in (("bm25s", engines.Bm25s), ("tantivy", engines.Tantivy)):
        t0 = time.perf_counter()
        others[name] = cls(texts)
        ready[name] = time.perf_counter() - t0
    for q in questions[-20:]:  # warm-up, not counted
        memory.search(q)
        for engine in others.values():
            engine.search(q, limit)
    if settle:
        waited = _settled(memory)
        print(f"(waited {waited:.0f} s for the background save of the index)", file=sys.stderr)
        _keep_index_file(store_path, source)
    timed = {name: Timed() for name in ("memwork", *others)}
    for q in asked:  # one of each in turn, so a busy moment hits all alike
        timed["memwork"](lambda q=q: memory.search(q, limit=limit))
        for name, engine in others.items():
            timed[name](lambda e=engine, q=q: e.search(q, limit))
    writes_cell = "—"
    if shape == "mixed" and not passages:
        sid = memory.start_session(title="bench")["id"]
        writes, after = Timed(), Timed()
        for n, q in enumerate(asked[:50]):
            writes(lambda n=n, q=q: memory.observe(sid, f"observation {n}: {q}"))
            after(lambda q=q: memory.search(q, limit=limit))
        writes_cell = f"{statistics.median(writes.cpu):.2f} + {statistics.median(after.cpu):.2f} ms"
    memory.close()
    mean = sum(map(len, texts)) / max(1, len(texts))
    label = f"{shape}, {mean:.0f} chars" + (", passages asked" if passages else "")
    names = {"memwork": "memwork `Memory.search`", "bm25s": "bm25s", "tantivy": "tantivy"}
    after_write = {"memwork": writes_cell, "bm25s": "a full rebuild", "tantivy": "—"}
    for n, (name, t) in enumerate(timed.items()):
        cells = (
            f"| {size:,} | {label} |" if n == 0 else "| | |",
            f" {names[name]} | {ready[name]:.2f} s | {t.cell('cpu')} | {t.cell('wall')} ",
            f"| {after_write[name]} |",
        )
        print("".join(cells), flush=True)
    shutil.rmtree(store_path, ignore_errors=True)
    return {
        "records": size,
        "shape": shape,
        "queries": "passages" if passages else "questions",
        "mean chars": round(mean),
        "ready s": ready,
        "cpu p50 ms": {k: statistics.median(t.cpu) for k, t in timed.items()},
        "cpu p95 ms": {k: _p95(t.cpu) for k, t in timed.items()},
        "wall p50 ms": {k: statistics.median(t.wall) for k, t in timed.items()},
        "wall p95 ms": {k: _p95(t.wall) for k, t in timed.items()},
    }


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
    ap.add_argument(
        "--sets",
        default=",".join(("synthetic", *recall_sets.SETS)),
        help="comma-separated: synthetic, "
        + ", ".join(recall_sets.SETS + recall_sets.EXTRA_SETS)
        + " (the last only when named)",
    )
    ap.add_argument("--tuning-only", action="store_true", help="only the tuning slices")
    ap.add_argument(
        "--systems", default=",".join(SYSTEMS), help="comma-separated: " + ", ".join(SYSTEMS)
    )
    ap.add_argument(
        "--per-category", type=int, default=15, help="LongMemEval questions per type and slice"
    )
    ap.add_argument(
        "--harness",
        default="",
        help="store the public sets otherwise, comma-separated: " + ", ".join(HARNESSES),
    )
    ap.add_argument("--json", type=Path, metavar="FILE", help="write every number here")
    ap.add_argument("--latency", nargs="*", type=int, metavar="N", help="records per store")
    ap.add_argument(
        "--shapes", default="mixed,long,short", help="--latency stores: mixed,long,short"
    )
    ap.add_argument("--rounds", type=int, default=300, help="questions timed per store")
    ap.add_argument("--limit", type=int, default=10, help="hits per query (--latency)")
    ap.add_argument(
        "--passages",
        action="store_true",
        help="--latency: ask MADial-Bench's dialogues (~600 characters) instead of questions",
    )
    ap.add_argument("--mcp", type=int, metavar="N", help="MCP search at N records")
    ap.add_argument("--no-quality", action="store_true")
    ap.add_argument(
        "--no-settle",
        action="store_true",
        help="--latency: time queries while the index built in the process is being saved",
    )
    ap.add_argument("--synthetic-only", action="store_true", help="= --sets synthetic")
    args = ap.parse_args(argv)
    sets = ["synthetic"] if args.synthetic_only else [s for s in args.sets.split(",") if s]
    for name in sets:
        if name != "synthetic" and name not in recall_sets.SETS + recall_sets.EXTRA_SETS:
            known = ", ".join(recall_sets.SETS + recall_sets.EXTRA_SETS)
            ap.error(f"--sets: unknown set {name!r} (known: synthetic, {known})")
    chosen = tuple(s for s in SYSTEMS if s in args.systems.split(","))
    unknown = set(args.systems.split(",")) - set(SYSTEMS) - {""}
    if unknown or not chosen:
        ap.error(f"--systems: unknown {sorted(unknown)} (known: {', '.join(SYSTEMS)})")
    harness = frozenset(h for h in args.harness.split(",") if h)
    if harness - set(HARNESSES):
        ap.error(
            f"--harness: unknown {sorted(harness - set(HARNESSES))} (known: {', '.join(HARNESSES)})"
        )
    if {"one-session", "turn-sessions"} <= harness:
        ap.error("--harness: one-session and turn-sessions exclude each other")
    shapes = [s for s in args.shapes.split(",") if s]
    for shape in shapes:
        if shape != "mixed" and shape not in SHAPES:
            ap.error(f"--shapes: unknown shape {shape!r} (known: mixed, long, short)")
    report: dict[str, Any] = {"tuning only": args.tuning_only, "harness": sorted(harness)}
    if not args.no_quality:
        report["quality"] = quality(sets, args.tuning_only, args.per_category, chosen, harness)
    if args.latency is not None:
        passages = madial_passages() if args.passages else None
        if args.passages and not passages:
            ap.error(f"--passages: no MADial-Bench data under {DATA}; see bench/get_recall_data.sh")
        print()
        report["latency"] = latency(
            args.latency or [10_000, 100_000],
            args.rounds,
            args.limit,
            shapes,
            not args.no_settle,
            passages,
        )
    if args.mcp:
        over_mcp(args.mcp, args.rounds)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
