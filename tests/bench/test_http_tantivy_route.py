"""The HTTP benchmark's ``/v1/tantivy`` (bench/http_echo_server.py): tantivy searching
the store's own notes behind the same door as ``/v1/search``. The figures it gives are
read beside memwork's, so it must answer the same question over the same notes, with
hits of the same shape, and be absent unless asked for."""

from __future__ import annotations

import http.client
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import bench_http_search  # noqa: E402
from http_search_fill import fill  # noqa: E402

NOTES = [
    "rotated the staging keys after the audit",
    "the billing deploy failed on a missing migration",
    "adopted a greyhound called Pixel",
    "lunch with the payments team",
]


def _post(port: int, path: str, body: dict[str, object]) -> tuple[int, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        conn.close()


@pytest.fixture
def notes(tmp_path: Path) -> tuple[Path, Path]:
    store = tmp_path / "store"
    fill(store, NOTES)
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(NOTES))
    return store, texts


@pytest.fixture
def server(notes: tuple[Path, Path]) -> Iterator[int]:
    store, texts = notes
    process, port = bench_http_search.start(bench_http_search.ROOT, store, 0, texts)
    try:
        yield port
    finally:
        bench_http_search.stop(process)


def test_tantivy_answers_over_the_same_notes_with_hits_shaped_like_a_search(
    server: int,
) -> None:
    status, hits = _post(server, "/v1/tantivy", {"query": "why did the billing deploy fail"})
    assert status == 200
    assert isinstance(hits, list) and hits
    assert hits[0]["title"] == NOTES[1]
    assert set(hits[0]) == {"kind", "id", "title", "score"}
    assert hits[0]["score"] > 0
    searched_status, searched = _post(server, "/v1/search", {"query": "billing deploy"})
    assert searched_status == 200
    assert NOTES[1] in searched[0]["title"]  # the same note, found by memwork


def test_a_query_of_stop_words_only_finds_nothing_and_the_limit_is_kept(server: int) -> None:
    assert _post(server, "/v1/tantivy", {"query": "what did we do"}) == (200, [])
    status, hits = _post(server, "/v1/tantivy", {"query": "the staging payments greyhound"})
    assert status == 200 and len(hits) == 3
    status, hits = _post(
        server, "/v1/tantivy", {"query": "the staging payments greyhound", "limit": 1}
    )
    assert status == 200 and len(hits) == 1


def test_without_the_option_there_is_no_such_route(notes: tuple[Path, Path]) -> None:
    store, _ = notes
    process, port = bench_http_search.start(bench_http_search.ROOT, store, 0)
    try:
        status, _ = _post(port, "/v1/tantivy", {"query": "billing"})
        assert status == 404
        assert _post(port, "/v1/echo", {"query": "billing"}) == (200, {"query": "billing"})
    finally:
        bench_http_search.stop(process)
