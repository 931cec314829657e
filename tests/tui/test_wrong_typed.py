"""A wrong-typed record (a table file edited by hand) never takes a workbench pane down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import folded, resealed
from tests.tui.conftest import SIZE, open_pane, run, screen_text


@pytest.mark.slow
def test_the_slots_pane_opens_with_a_wrong_typed_slot_left_out(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    path = folded(demo_path) / "slots.json"
    data = json.loads(path.read_text())
    bad = next(d for d in data["documents"].values() if d["label"] == "persona")
    bad["position"] = "first"
    path.write_text(json.dumps(data))
    resealed(path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            text = screen_text(app)
            assert "5 slots · 1 over limit · 1 read-only" in text  # the other five
            assert "corrections/support-mistakes" in text
            assert "persona" not in text

    run(scenario)
    assert json.loads(path.read_text())["documents"][bad["id"]]["position"] == "first"
