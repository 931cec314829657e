"""core/ never imports textual: agents call the CLI on every step; the core stays UI-free."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import memwork.core
from tests.conftest import python_env

# One interpreter imports every module in turn and names the first one after
# which textual is loaded, so the test stays fast and still points at the culprit.
PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
    if any(m == "textual" or m.startswith("textual.") for m in sys.modules):
        print(name)
        break
"""


def _core_modules() -> list[str]:
    return ["memwork.core"] + [
        m.name for m in pkgutil.walk_packages(memwork.core.__path__, "memwork.core.")
    ]


@pytest.mark.slow
def test_every_core_module_imports_without_textual() -> None:
    modules = _core_modules()
    assert len(modules) > 20
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"importing {done.stdout.strip()} pulled in textual"


def test_cli_context_path_does_not_import_textual_or_pydantic(tmp_path) -> None:
    probe = (
        "import sys; from memwork.core.doors.cli.main import main; "
        f"main(['--db', {str(tmp_path / 's')!r}, 'context']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'pydantic', 'rich'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("[]")


#: Every memwork module `memwork context --task T` loads (context_log on: it also records
#: what it injected). Each one
#: is there for a reason; a new one on this path (which agents pay on every step) must be
#: added here on purpose. The operations' registry is one of them (the CLI's parser is made
#: from it); the doors' machinery (the runner, shapes, codegen, Memory, MCP, HTTP) is not.
#: Each layer's package (``memwork.core.base`` ...) is loaded with its first module.
CONTEXT_PATH = {
    "memwork",
    "memwork.core",
    *(
        f"memwork.core.{name}"
        for name in (
            "base base.clock base.env_settings base.errors base.filepaths base.ids "
            "base.lazy_regex base.lazyjson base.names base.no_wait base.numbers base.plainjson "
            "base.text "
            "domain domain.aggregates domain.consolidated_rules domain.decay domain.failures "
            "domain.migrations "
            "domain.ranking domain.readable "
            "doors doors.cli doors.cli.cmd_context doors.cli.main doors.cli.parser "
            "ledger ledger.audit ledger.config ledger.isolation ledger.links "
            "models models.card_text ops ops.operations "
            "privacy privacy.assign privacy.controls privacy.gate privacy.gitleaks "
            "privacy.gitleaks_index privacy.rules "
            "services services.context services.context.budget services.context.build "
            "services.context.default_style services.context.episodic_style "
            "services.context.log services.context.sources "
            "storage storage.atomic storage.backend storage.cache storage.codec "
            "storage.derived_files storage.folder_backend storage.journal storage.lock "
            "storage.log_damage storage.manifest storage.paths storage.schema storage.shards "
            "storage.store "
            "storage.table_sums storage.tables storage.url storage.wal"
        ).split()
    ),
}
#: Modules the context and record-episode paths used to load or must never load. TinyDB
#: is the document API for callers that ask for one (``Store.table``), and pathlib (with
#: the urllib.parse and ipaddress it imports) is made only for callers that want a
#: ``Path``: each costs a fresh process ~3 ms, and these paths work without them.
HEAVY = {
    *("shutil", "bz2", "lzma", "inspect", "dataclasses", "asyncio", "subprocess", "ssl"),
    *("tinydb", "pathlib", "urllib.parse", "ipaddress", "tempfile"),
    "numpy",  # recall's scoring: only a query needs it (~80 ms to import)
    "httpx",  # the model endpoint's client: only consolidate, reflect and crystallize ask
}

# A development install's import hook loads pathlib before any memwork code runs, so the
# probe forgets it (and what it brought) first: whatever loads it again is memwork's.
PROBE_START = """
import sys
for name in ("pathlib", "urllib.parse", "ipaddress", "tempfile", "shutil"):
    sys.modules.pop(name, None)
from memwork.core.doors.cli.main import main
heavy = set(sys.argv[2:])
"""

CONTEXT_PROBE = (
    PROBE_START
    + """
code = main(["--db", sys.argv[1], "context", "--task", "deploy-api"])
print(code, len(sys.modules), sorted(m for m in sys.modules if m.startswith("memwork")))
print(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy))
"""
)

RECORD_PROBE = (
    PROBE_START
    + """
code = main(["--db", sys.argv[1], "record-episode", "-"])
print(code, sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy))
"""
)


def test_the_context_path_loads_only_the_modules_it_needs(tmp_path) -> None:
    from memwork.core.domain import lessons
    from memwork.core.ledger import config
    from memwork.core.storage.store import Store
    from tests.conftest import NOW

    store = Store(tmp_path / "s")
    lessons.add_lesson(store, "Canary every deploy", scope="task:deploy-api", now=NOW, actor="t")
    config.set_value(store, "context_log", "on", now=NOW, actor="t")
    store.close()
    done = subprocess.run(
        [sys.executable, "-c", CONTEXT_PROBE, str(tmp_path / "s"), *sorted(HEAVY)],
        capture_output=True,
        text=True,
        # As an agent runs it: without the test suite's check of every commit's bytes.
        env={k: v for k, v in python_env().items() if k != "MEMWORK_VERIFY_WRITES"},
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.strip().splitlines()[-2:]
    code, _, rest = first.partition(" ")
    _, _, loaded = rest.partition(" ")
    assert code == "0"
    assert set(eval(loaded)) == CONTEXT_PATH  # noqa: S307 - our own probe's repr of a list
    assert eval(second) == []  # noqa: S307


def test_record_episode_loads_none_of_the_heavy_modules(tmp_path) -> None:
    # An agent records an episode per task; it must not pay for pathlib, tempfile or
    # TinyDB either (the process is measured against the context's).
    done = subprocess.run(
        [sys.executable, "-c", RECORD_PROBE, str(tmp_path / "s"), *sorted(HEAVY)],
        input='{"task": "deploy-api", "score": 0.4, "summary": "rolled back", '
        '"mistakes": ["skipped the canary"], "steps": 3}',
        capture_output=True,
        text=True,
        env={k: v for k, v in python_env().items() if k != "MEMWORK_VERIFY_WRITES"},
    )
    assert done.returncode == 0, done.stderr
    code, _, loaded = done.stdout.strip().splitlines()[-1].partition(" ")
    assert code == "0"
    assert eval(loaded) == []  # noqa: S307 - our own probe's repr of a list
