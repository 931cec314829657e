"""The workbench on a Redis store: it shows the same store, and follows other writers
through the store's commit channel (pub/sub), not by polling."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwork.core.domain import episodes, lessons
from memwork.core.storage.copy import copy_store
from memwork.core.storage.store import Store
from memwork.tui import app as app_module
from memwork.tui.app import make_app
from tests.tui.conftest import DEMO_NOW, SIZE, open_pane, run, screen_text, settle


@pytest.fixture
def demo_in_redis(demo_path: Path, redis_url: str) -> str:
    """The demo store, copied into an empty Redis database."""
    copy_store(demo_path, redis_url)
    return redis_url


NOW = datetime.fromisoformat(DEMO_NOW.replace("Z", "+00:00"))


async def _until(pilot, condition, seconds: float = 5.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await settle(pilot)
        if condition():
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.slow
def test_the_workbench_follows_other_writers_without_polling(
    demo_in_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A poll would come an hour late: only the pushed commit can update the view.
    monkeypatch.setattr(app_module, "POLL_SECONDS", 3600.0)

    async def scenario() -> None:
        app = make_app(demo_in_redis)
        async with app.run_test(size=SIZE) as pilot:
            # The title names the store's URL, as MEMWORK_DB would (the header's
            # curation counts follow it).
            assert app.title_base == demo_in_redis
            assert app.sub_title.startswith(app.title_base)
            await open_pane(pilot, "episodes")
            reader = Store(demo_in_redis)
            with reader.reading():
                total = episodes.count(reader)
            assert f"{total} episodes" in screen_text(app)
            writer = Store(demo_in_redis)  # an agent on another machine, say
            episodes.record_episodes(
                writer,
                [{"task_id": "deploy-api", "score": 0.91, "steps": 7, "summary": "From afar"}],
                now=datetime(2026, 11, 20, 11, 59, tzinfo=UTC),
                actor="cli",
            )
            assert await _until(pilot, lambda: "From afar" in screen_text(app))
            assert f"{total + 1} episodes" in screen_text(app)
            lessons.add_lesson(writer, "Pin the base image digest", now=NOW, actor="cli")
            moved = writer.committed_generation()
            assert await _until(pilot, lambda: app._generation == moved)
            writer.close()

    run(scenario)


@pytest.mark.slow
def test_a_folder_workbench_still_polls(demo_path: Path, demo_in_redis: str) -> None:
    """A folder cannot push: its workbench polls; a Redis one sets no poll at all."""
    polled: dict[str, bool] = {}

    async def scenario(location: Path | str) -> None:
        app = make_app(location)
        intervals = []
        set_interval = app.set_interval

        def recording(interval, callback, **kwargs):  # noqa: ANN001, ANN003, ANN202
            intervals.append(callback)
            return set_interval(interval, callback, **kwargs)

        app.set_interval = recording  # type: ignore[method-assign]
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            polled[str(location)] = app.check_store in intervals

    asyncio.run(scenario(demo_path))
    asyncio.run(scenario(demo_in_redis))
    assert polled == {str(demo_path): True, demo_in_redis: False}
