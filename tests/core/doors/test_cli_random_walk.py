"""Every command, given flags it was not given in any scenario and values no one meant.

The hostile-input tests put each corpus value where a scenario's command had a value;
a flag the scenario left out, and the JSON output of a verb that runs itself, went
untried: a budget of 23 digits passed to ``context --json`` ended in the encoder's
internal error, and a key file name too long for the system in ``curator init``
ended in an OSError. Here a seeded walk picks a verb of the whole command tree, fills
its positionals and some of its flags with values of the corpus and ordinary ones, and
runs it: each answer is an exit 0, or an exit 2 with one line; the store passes
``doctor`` afterwards.
"""

from __future__ import annotations

import argparse
import io
import random
from pathlib import Path
from typing import Any

import pytest

from memwork.core.doors.cli.parser import build
from tests.cli_in_process import run as cli
from tests.core.ops import test_door_parity as parity
from tests.core.ops.test_hostile_inputs import HOSTILE_ARGV

#: Verbs that serve or wait for a person (a server, an editor): not for a walk.
LONG_RUNNING = {"serve", "mcp", "edit"}


def _verbs(parser: argparse.ArgumentParser, path: list[str]) -> list[tuple[list[str], Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = []
            for name, sub in action.choices.items():
                found += _verbs(sub, [*path, name])
            return found
    return [(path, parser)]


@pytest.mark.slow
def test_no_command_given_random_flags_and_values_ends_in_an_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", parity.NOW)
    monkeypatch.chdir(tmp_path)  # whatever a command writes lands here
    db = tmp_path / "db"
    session = cli(db, "session", "start", "--title", "walk").stdout.strip()
    assert cli(db, "observe", "--session", session, "db migration in prod").returncode == 0
    assert cli(db, "lesson", "add", "Prefer reversible changes").returncode == 0
    verbs = [(p, v) for p, v in _verbs(build(), []) if p and not LONG_RUNNING & set(p)]
    assert len(verbs) > 80
    values = [*HOSTILE_ARGV, session, "1", "10", "x", "7d", "2026-01-01"]
    rng = random.Random(5)
    found: dict[str, str] = {}
    for _ in range(3000):
        path, parser = rng.choice(verbs)
        argv = list(path)
        flags = [a for a in parser._actions if a.option_strings and a.dest != "help"]
        for action in parser._actions:
            if not action.option_strings and rng.random() < 0.85:
                argv.append(rng.choice(values))
        for action in rng.sample(flags, k=min(len(flags), rng.randint(0, 3))):
            argv.append(rng.choice(action.option_strings))
            if action.nargs != 0:
                argv.append(rng.choice(values))
        # ``-`` reads a record from stdin: an empty one, as from `< /dev/null` (each
        # call's own, as each process has: a read closes it).
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        try:
            done = cli(db, *argv)
        except SystemExit:  # --help and --version end the parse, as in a process
            continue
        lines = done.stderr.strip().splitlines()
        if done.returncode not in (0, 2) or (done.returncode == 2 and len(lines) != 1):
            found.setdefault(" ".join(path), f"{argv!r:.200} -> {done.returncode}: {lines}")
    assert not found, "\n".join(f"{k}: {v}" for k, v in sorted(found.items()))
    doctor = cli(db, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr


def test_a_number_past_the_bounds_is_refused_by_a_verb_that_runs_itself(tmp_path: Path) -> None:
    for argv in (
        ["--json", "context", "--budget", "99999999999999999999999"],
        ["context", "--max-rules", "-" + "9" * 30],
    ):
        done = cli(tmp_path / "db", *argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.startswith("memwork: ") and "must be a whole number within" in (
            done.stderr
        )
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "db").exists()  # refused before the store was opened


def test_a_key_file_the_system_cannot_make_is_refused_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    for name, says in (
        ("k" * 400, "File name too long"),
        (str(blocker / "curator.key"), "a file stands where a folder of its path should be"),
    ):
        done = cli(tmp_path / "db", "curator", "init", name)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("memwork: FILE: cannot make ") and says in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert blocker.read_text() == "not a folder\n"
