"""The scrubber on clean text: today's against a baseline revision's, in one run.

Every string an agent writes and every line of every context passes the scrubber, and
almost none of it holds a secret, so clean text is what must stay cheap. This times
``core.privacy.scrub`` on clean developer text of 50, 500 and 5,000 characters (windows
of the ordinary-text corpus, README/docs lines and the demo store's text, kept only
where neither scrubber changes them), the two scrubbers called alternately, best of
``--reps``; and a fresh process's first scrub of the demo store's context (what
``memwork context`` pays once: loading rules, compiling the patterns it needs). A
process's cache of texts found clean is emptied before each timed pass: the figures
are for text the scrubber has not seen yet.

The baseline is ``core/privacy`` at ``--baseline`` (a git revision, default ``main``),
copied out of git into a temporary package. Before the rule set, the scrubber used
detect-secrets: the baseline needs ``pip install detect-secrets==1.5.0``.

Usage: python bench/bench_scrub.py [--baseline REV] [--reps 9] [--texts 40]
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memwork.core.privacy import scrub  # noqa: E402

Scrub = Callable[..., str]
SIZES = (50, 500, 5000)


def baseline_package(rev: str, folder: Path) -> str:
    """``core/privacy`` at ``rev`` as the package ``baseline_privacy`` in ``folder``."""
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{rev}:core/privacy"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    package = folder / "baseline_privacy"
    package.mkdir()
    for name in listing:
        if not name.endswith(".py") or name == "fields.py":  # fields needs core.base.errors
            continue
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{rev}:core/privacy/{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (package / name).write_text(source)
    return str(folder)


def clean_lines() -> list[str]:
    """Ordinary developer text: the test corpus, README and docs, the demo store."""
    corpus = json.loads((ROOT / "tests/data/ordinary_text.json").read_text())
    lines = [t for texts in corpus["texts"].values() for t in texts]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines += [line for line in doc.read_text().splitlines() if line.strip()]
    for table in sorted((ROOT / "data/demo").glob("*.json")):
        data = json.loads(table.read_text())
        for doc in data.get("documents", {}).values():
            for key in ("summary", "content", "text", "lesson", "evidence"):
                if isinstance(doc.get(key), str) and doc[key].strip():
                    lines.append(doc[key])
    return lines


def windows(pool: str, size: int, count: int, keep: Callable[[str], bool]) -> list[str]:
    rnd = random.Random(size)
    out: list[str] = []
    while len(out) < count:
        start = rnd.randrange(0, len(pool) - size)
        text = pool[start : start + size]
        if keep(text):
            out.append(text)
    return out


def _forget(fn: Scrub) -> None:
    """Empty the scrubber's cache of texts found clean (a long-lived process keeps one):
    what is timed is a text seen for the first time, as every new record is."""
    cache = getattr(sys.modules.get(fn.__module__), "_CLEAN", None)
    if cache is not None:
        cache.clear()


def per_call(fn: Scrub, texts: list[str]) -> float:
    _forget(fn)
    t0 = time.perf_counter()
    for text in texts:
        fn(text)
    return (time.perf_counter() - t0) / len(texts) * 1e6


COLD = """
import sys, time
sys.path.insert(0, {path!r})
lines = {lines!r}
t0 = time.perf_counter()
from {module} import scrub
t1 = time.perf_counter()
for line in lines:
    scrub(line)
t2 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000)
"""


def cold(path: str, module: str, lines: list[str], runs: int) -> tuple[float, float]:
    """Median import and first-scrub milliseconds of fresh interpreters."""
    imports, firsts = [], []
    for _ in range(runs):
        code = COLD.format(path=path, module=module, lines=lines)
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        a, b = map(float, out.stdout.split())
        imports.append(a)
        firsts.append(b)
    imports.sort()
    firsts.sort()
    return imports[len(imports) // 2], firsts[len(firsts) // 2]


def context_lines() -> list[str]:
    """The lines of the demo store's context for its busiest task (built in a copy)."""
    import shutil

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        shutil.copytree(ROOT / "data/demo", store)
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "memwork",
                "--db",
                str(store),
                "context",
                "--task",
                "deploy-api",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return out.splitlines()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="main", help="git revision to compare with")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--texts", type=int, default=40)
    ap.add_argument("--cold-runs", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = baseline_package(a.baseline, Path(tmp))
        sys.path.insert(0, path)
        try:
            base: Scrub = importlib.import_module("baseline_privacy").scrub
            base("warm up: password=Xy7pQ2zz9Lm")  # imports detect-secrets if it needs it
        except ImportError as exc:
            raise SystemExit(
                f"the baseline needs {exc.name}: pip install detect-secrets==1.5.0"
            ) from None
        lines = clean_lines()
        pool = "\n".join(t for t in lines if scrub(t) == t and base(t) == t)
        print(f"clean text: {len(pool):,} characters; baseline {a.baseline}; best of {a.reps}")
        print("| length | baseline µs/call | now µs/call | ratio |")
        print("|---:|---:|---:|---:|")
        for size in SIZES:
            texts = windows(pool, size, a.texts, lambda t: scrub(t) == t and base(t) == t)
            for fn in (base, scrub):  # warm: lazy compiles, imports
                per_call(fn, texts)
            best_b = best_n = float("inf")
            for _ in range(a.reps):
                best_b = min(best_b, per_call(base, texts))
                best_n = min(best_n, per_call(scrub, texts))
            print(f"| {size:,} | {best_b:.1f} | {best_n:.1f} | {best_n / best_b:.2f}x |")
        ctx = context_lines()
        print(f"\nfresh process, the demo context ({len(ctx)} lines), median of {a.cold_runs}:")
        print("| | import ms | first scrub of every line ms |")
        print("|---|---:|---:|")
        for name, where, module in (
            ("baseline", path, "baseline_privacy"),
            ("now", str(ROOT), "memwork.core.privacy"),
        ):
            imp, first = cold(where, module, ctx, a.cold_runs)
            print(f"| {name} | {imp:.1f} | {first:.1f} |")


if __name__ == "__main__":
    main()
