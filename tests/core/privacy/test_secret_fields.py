"""Secrets through every field that comes from outside, and out of every output.

Free-text fields are scrubbed; identifiers (which records link through, so they
cannot be rewritten) are refused with exit 2 naming the field, the store unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.domain import lessons, sessions
from memwork.core.domain.working_memory import keys as wm_keys
from memwork.core.models.base import validate
from memwork.core.models.episode import EpisodeInput
from memwork.core.privacy import scrub
from memwork.core.storage.store import Store
from tests.conftest import NOW, folded, folder_digest
from tests.core.privacy.test_privacy import PERSONAL, SECRETS

_B62 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz"
#: Secret values without spaces, of several kinds, for the CLI round trips.
SAMPLE = [
    "ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX",
    "AKIA" + "Z5QK7MDR2HXJ3WLN",
    "xoxb-1234567890-0987654321-" + _B62,
    "PASSWORD=hunter2rocks",
    "hf_" + _B62,
    "sk-" + _B62,
]
#: Every non-personal corpus text that an identifier check must refuse.
IDENTIFIER_CORPUS = [(what, t.format(s), s) for what, kind, t, s in SECRETS if kind not in PERSONAL]


def test_the_identifier_corpus_is_large() -> None:
    assert len(IDENTIFIER_CORPUS) >= 60


@pytest.mark.parametrize(("what", "text", "secret"), IDENTIFIER_CORPUS)
def test_every_identifier_field_refuses_the_corpus(what: str, text: str, secret: str) -> None:
    ident = " ".join(text.split())
    base = {"score": 0.5}
    for field in ("task_id", "session_id", "worker_id"):
        with pytest.raises(InvalidInput) as err:
            validate(EpisodeInput, {**base, field: ident[:200]})
        assert err.value.field == field
        assert "secret" in err.value.rule and secret not in str(err.value)
    for field in ("task_id", "worker_id"):
        with pytest.raises(InvalidInput) as err:
            validate(EpisodeInput, {**base, "mistake_cards": [{field: ident[:200]}]})
        assert err.value.field == f"mistake_cards.0.{field}"


# -- identifiers through the CLI: exit 2, the field named, the store unchanged --------------
def _refused(cli, db: Path, field: str, *args: str, stdin: str | None = None) -> None:  # noqa: ANN001
    before = folder_digest(db)
    done = cli(*args, stdin=stdin)
    assert done.code == 2, (args, done.out, done.err)
    assert field in done.err and "secret" in done.err
    assert len(done.err.strip().splitlines()) == 1
    assert folder_digest(db) == before


@pytest.mark.parametrize("secret", SAMPLE)
def test_cli_refuses_secret_shaped_identifiers(cli, db: Path, secret: str, monkeypatch) -> None:  # noqa: ANN001
    sid = cli("session", "start").out.strip()
    label_ok = all(c.isalnum() or c in "_-./" for c in secret)
    episode = {"score": 0.3, "summary": "s"}
    _refused(cli, db, "task_id", "record-episode", stdin=json.dumps({**episode, "task_id": secret}))
    _refused(
        cli, db, "session_id", "record-episode", stdin=json.dumps({**episode, "session_id": secret})
    )
    _refused(
        cli, db, "worker_id", "record-episode", stdin=json.dumps({**episode, "worker_id": secret})
    )
    cards = {**episode, "mistake_cards": [{"worker_id": secret}]}
    _refused(cli, db, "worker_id", "record-episode", stdin=json.dumps(cards))
    _refused(cli, db, "scope", "lesson", "add", "a lesson", "--scope", f"task:{secret}")
    _refused(cli, db, "scope", "rule", "add", "a rule", "--scope", f"task:{secret}")
    _refused(cli, db, "agent_id", "session", "start", "--agent", secret)
    _refused(cli, db, "key", "wm", "--session", sid, "set", secret, "v")
    _refused(cli, db, "task_id", "wm", "--session", sid, "task", "--id", secret)
    if label_ok:
        _refused(cli, db, "label", "slot", "set", secret, "text")
    monkeypatch.setenv("MEMWORK_AGENT", secret)
    _refused(cli, db, "MEMWORK_AGENT", "lesson", "add", "a lesson")


# -- free text: scrubbed on the way in, gone from every output -----------------------------
def _all_outputs(cli, db: Path) -> str:  # noqa: ANN001
    sid = cli("session", "list", "--json").json()[0]["id"]
    outputs = [
        cli("context", "--task", "t"),
        cli("context", "--task", "t", "--format", "json"),
        cli("export"),
        cli("lesson", "list", "--all"),
        cli("lesson", "list", "--all", "--json"),
        cli("rule", "list", "--all", "--json"),
        cli("session", "list", "--json"),
        cli("session", "show", sid, "--json"),
        cli("session", "show", sid),
        cli("wm", "--session", sid, "list", "--json"),
        cli("wm", "--session", sid, "task", "--json"),
        cli("wm", "--session", sid, "checkpoint", "list", "--json"),
        cli("checkpoint", "list", "--json"),
        cli("checkpoint", "list"),
        cli("slot", "list", "--json"),
        cli("stats"),
    ]
    for done in outputs:
        assert done.code == 0, done.err
    files = "".join(p.read_text(errors="replace") for p in db.rglob("*.json"))
    return "\n".join(d.out for d in outputs) + files


@pytest.mark.parametrize(
    ("what", "kind", "template", "secret"), [s for s in SECRETS if s[1] not in PERSONAL][::3]
)
def test_free_text_fields_are_scrubbed_everywhere(
    cli,
    db: Path,
    what: str,
    kind: str,
    template: str,
    secret: str,  # noqa: ANN001
) -> None:
    text = template.format(secret)
    one_line = " ".join(text.split())
    # Short label fields (observation kind, task status) take the text when it fits.
    label = one_line if len(scrub(one_line)) <= 50 else "label"
    sid = cli("session", "start", "--title", text).out.strip()
    done = cli("observe", "--session", sid, "--kind", label, "--tag", one_line, text)
    assert done.code == 0, done.err
    episode = {
        "task_id": "t",
        "score": 0.2,
        "summary": text,
        "mistakes": [text],
        "errors": [{"error_type": one_line[:200], "message": text, "resolution": text}],
        "mistake_cards": [
            {"mistake_type": one_line, "evidence": text, "lesson": text, "bad_decision": text}
        ],
        "metadata": {"note": text, "nested": [text]},
        "session_id": sid,
    }
    assert cli("record-episode", stdin=json.dumps(episode)).code == 0
    assert cli("lesson", "add", f"lesson: {text}", "--tag", one_line, "--scope", "task:t").code == 0
    assert cli("rule", "add", f"rule {one_line}", "--scope", "task:t").code == 0
    assert cli("slot", "set", "notes", text, "--description", one_line, "--limit", "9000").code == 0
    assert cli("wm", "--session", sid, "set", "k", text).code == 0
    done = cli("wm", "--session", sid, "task", "--status", label, "--description", text)
    assert done.code == 0, done.err
    assert cli("wm", "--session", sid, "scratch", "add", text).code == 0
    assert cli("wm", "--session", sid, "checkpoint", "create", "-m", one_line).code == 0
    assert cli("checkpoint", "create", "-m", one_line).code == 0
    assert cli("session", "end", sid, "--summary", text).code == 0
    everything = _all_outputs(cli, db)
    assert secret not in everything
    assert f"[redacted:{kind}]" in everything


def test_personal_details_stay_in_slots_only(cli, db: Path) -> None:  # noqa: ANN001
    text = "contact ann@example.com at 10.0.0.7 in /home/ann"
    cli("session", "start")
    assert cli("slot", "set", "contacts", text).code == 0
    assert cli("lesson", "add", text).code == 0
    everything = _all_outputs(cli, db)
    assert everything.count("ann@example.com") >= 3  # slot list, context, export, disk
    lesson = cli("lesson", "list", "--json").json()[0]["content"]
    assert lesson == "contact [redacted:email] at [redacted:ipv4] in [redacted:home_path]"
    context = cli("context").out
    assert text in context and "[redacted:email]" in context


# -- the Python API refuses and scrubs the same way ----------------------------------------
def test_python_api_checks_identifiers_and_scrubs_text(store: Store) -> None:
    secret = SAMPLE[0]
    with pytest.raises(InvalidInput) as err:
        lessons.add_lesson(store, "x", now=NOW, actor="api", scope=f"task:{secret}")
    assert err.value.field == "scope"
    with pytest.raises(InvalidInput) as err:
        lessons.add_lesson(store, "x", now=NOW, actor=f"api:{secret}")
    assert err.value.field == "actor"
    with pytest.raises(InvalidInput) as err:
        sessions.start_session(store, agent_id=secret, now=NOW, actor="api")
    assert err.value.field == "agent_id"
    sid = sessions.start_session(store, now=NOW, actor="api")["id"]
    with pytest.raises(InvalidInput) as err:
        wm_keys.set_key(store, sid, secret, 1, now=NOW, actor="api")
    assert err.value.field == "key"
    saved = lessons.add_lesson(store, "x", now=NOW, actor="api", tags=[f"t {secret}"]).lesson
    assert saved["tags"] == ["t [redacted:github-pat]"]
    obs = sessions.observe(store, sid, "seen", kind=secret, now=NOW, actor="api")
    assert obs["kind"] == "[redacted:github-pat]"


# -- redactions are reported ----------------------------------------------------------------
def test_redactions_are_reported_on_stderr_in_json_and_in_the_audit(cli, db: Path) -> None:  # noqa: ANN001
    done = cli("lesson", "add", "PASSWORD=hunter2rocks and mail a@b.com")
    assert done.code == 0
    assert done.err.strip().endswith("2 redactions (email 1, password 1)")
    done = cli("lesson", "add", "token " + SAMPLE[0], "--json")
    assert done.json()["redactions"] == {"github-pat": 1}
    assert "redactions" not in done.err
    clean = cli("lesson", "add", "nothing to hide", "--json")
    assert "redactions" not in clean.json() and clean.err == ""
    episodes = [
        {"score": 0.9, "summary": "ok"},
        {"score": 0.2, "summary": "from /home/bob with " + SAMPLE[5], "mistakes": ["x@y.org"]},
    ]
    done = cli("record-episode", stdin="\n".join(json.dumps(e) for e in episodes))
    assert done.code == 0 and "3 redactions (api_key 1, email 1, home_path 1)" in done.err
    audit = [
        d
        for p in sorted(folded(db).glob("audit.*.json"))
        for d in json.loads(p.read_text())["documents"].values()
    ]
    audit.sort(key=lambda d: d["seq"])
    assert [a.get("redactions") for a in audit] == [
        {"email": 1, "password": 1},
        {"github-pat": 1},
        None,
        None,
        {"api_key": 1, "email": 1, "home_path": 1},
    ]
    assert "hunter2rocks" not in json.dumps(audit)
