"""Big loads run without the cyclic collector's full passes, and leave their data frozen."""

from __future__ import annotations

import gc
import threading

import pytest

from memwork.tui.gc_pause import big_load


@pytest.mark.slow
def test_collection_pauses_during_a_load_and_resumes_after_the_last() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    started, release = threading.Event(), threading.Event()

    def other_load() -> None:
        with big_load():
            started.set()
            release.wait(5)

    thread = threading.Thread(target=other_load)
    thread.start()
    started.wait(5)
    with big_load():
        assert not gc.isenabled()
        kept = [[i] for i in range(1000)]  # long-lived data a load makes
    assert not gc.isenabled()  # the other load still runs
    release.set()
    thread.join()
    assert gc.isenabled()
    assert gc.get_freeze_count() >= frozen + len(kept)
    gc.unfreeze()


def test_a_collector_switched_off_by_someone_else_stays_off() -> None:
    gc.disable()
    try:
        with big_load():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
