"""The model endpoint's client against a real chat-completions server on a loopback port:
normal, slow, failing and malformed answers, and where the key goes (nowhere but the
Authorization header)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from memwork.core.base.errors import InvalidInput, ModelFailed
from memwork.core.services.llm import client, endpoint
from tests.chat_server import ChatServer, Reply, completion

KEY = "sk-test-0123456789abcdefSECRET"
ASK = [{"role": "user", "content": "hello"}]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    served = ChatServer()
    yield served
    served.close()


@pytest.fixture
def waits() -> list[float]:
    return []


def _chat(server: ChatServer, waits: list[float], **kw: object) -> str:
    where = endpoint.Endpoint(server.url, "test-model", KEY, **kw)  # type: ignore[arg-type]
    return client.chat(where, ASK, sleep=waits.append)


def test_a_normal_answer_is_the_first_choice(server: ChatServer, waits: list[float]) -> None:
    server.script(completion("hi there"))
    assert _chat(server, waits) == "hi there"
    (sent,) = server.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == f"Bearer {KEY}"
    assert sent["body"]["model"] == "test-model" and sent["body"]["messages"] == ASK
    assert KEY not in json.dumps(sent["body"])


def test_no_key_sends_no_authorization(server: ChatServer, waits: list[float]) -> None:
    where = endpoint.Endpoint(server.url, "local")
    assert client.chat(where, ASK, sleep=waits.append) == "[]"
    assert "Authorization" not in server.requests[0]["headers"]


def test_a_5xx_is_retried_with_backoff_then_succeeds(
    server: ChatServer, waits: list[float]
) -> None:
    server.script(Reply(503, "busy"), Reply(502, ""), completion("ok"))
    assert _chat(server, waits, retries=2) == "ok"
    assert len(server.requests) == 3 and waits == [client.BACKOFF, client.BACKOFF * 2]


def test_retries_are_bounded(server: ChatServer, waits: list[float]) -> None:
    server.script(Reply(500, '{"error": {"message": "overloaded"}}'))
    with pytest.raises(ModelFailed) as failed:
        _chat(server, waits, retries=1)
    assert len(server.requests) == 2
    assert str(failed.value) == (
        f"model endpoint {server.url} answered HTTP 500: overloaded (2 attempts); "
        "nothing was written"
    )


def test_a_429_is_retried(server: ChatServer, waits: list[float]) -> None:
    server.script(Reply(429, "slow down"), completion("ok"))
    assert _chat(server, waits) == "ok" and len(server.requests) == 2


def test_a_4xx_is_not_retried_and_the_echoed_key_is_hidden(
    server: ChatServer, waits: list[float]
) -> None:
    server.script(Reply(401, json.dumps({"error": {"message": f"Invalid API Key {KEY}"}})))
    with pytest.raises(ModelFailed) as failed:
        _chat(server, waits, retries=3)
    assert len(server.requests) == 1 and waits == []
    message = str(failed.value)
    assert "HTTP 401: Invalid API Key [key]" in message and "not retried" in message
    assert KEY not in message and KEY not in repr(failed.value)


def test_a_slow_endpoint_times_out(server: ChatServer, waits: list[float]) -> None:
    server.script(Reply(200, json.dumps({"choices": []}), delay=1.0))
    with pytest.raises(ModelFailed, match=r"timed out after 0.2 s \(2 attempts\)"):
        _chat(server, waits, timeout=0.2, retries=1)
    assert len(server.requests) == 2


def test_a_slow_first_answer_is_retried(server: ChatServer, waits: list[float]) -> None:
    server.script(Reply(200, "", delay=1.0), completion("ok"))
    assert _chat(server, waits, timeout=0.3, retries=1) == "ok"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("<html>gateway</html>", "Expecting value"),
        (json.dumps({"choices": []}), r"no choices\[0\].message.content"),
        (json.dumps({"choices": [{"message": {"content": None}}]}), "is not text"),
        (json.dumps([1, 2]), r"no choices\[0\]"),
    ],
)
def test_a_malformed_answer_is_not_retried(
    server: ChatServer, waits: list[float], body: str, why: str
) -> None:
    server.script(Reply(200, body))
    with pytest.raises(ModelFailed, match=f"answered malformed: .*{why}"):
        _chat(server, waits)
    assert len(server.requests) == 1


def test_an_endpoint_that_is_not_there(waits: list[float]) -> None:
    served = ChatServer()
    url = served.url
    served.close()
    where = endpoint.Endpoint(url, "m", KEY, retries=1)
    with pytest.raises(ModelFailed, match=r"could not be reached .*\(2 attempts\)"):
        client.chat(where, ASK, sleep=waits.append)


# -- configuration ------------------------------------------------------------------------
def test_no_url_means_no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    assert endpoint.configured() is None


def test_the_environment_names_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWORK_LLM_URL", "https://user:pw@api.example.com/openai/v1/?k=secret")
    monkeypatch.setenv("MEMWORK_LLM_MODEL", "llama-3.1-8b")
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    monkeypatch.setenv("MEMWORK_LLM_TIMEOUT", "5")
    monkeypatch.setenv("MEMWORK_LLM_RETRIES", "0")
    where = endpoint.configured()
    assert where is not None
    assert where.url == "https://user:pw@api.example.com/openai/v1/chat/completions?k=secret"
    assert where.shown == "https://api.example.com/openai/v1/chat/completions"
    assert (where.model, where.key, where.timeout, where.retries) == ("llama-3.1-8b", KEY, 5, 0)
    assert KEY not in repr(where)
    monkeypatch.setenv("MEMWORK_LLM_API_KEY", "own-key")
    assert endpoint.configured().key == "own-key"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "value", "field"),
    [
        ("MEMWORK_LLM_MODEL", "", "MEMWORK_LLM_MODEL"),
        ("MEMWORK_LLM_URL", "ftp://example.com/v1", "MEMWORK_LLM_URL"),
        ("MEMWORK_LLM_TIMEOUT", "soon", "MEMWORK_LLM_TIMEOUT"),
        ("MEMWORK_LLM_RETRIES", "1.5", "MEMWORK_LLM_RETRIES"),
        ("MEMWORK_LLM_RETRIES", "99", "MEMWORK_LLM_RETRIES"),
    ],
)
def test_a_half_given_configuration_is_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, field: str
) -> None:
    monkeypatch.setenv("MEMWORK_LLM_URL", "http://127.0.0.1:9/v1/chat/completions")
    monkeypatch.setenv("MEMWORK_LLM_MODEL", "m")
    monkeypatch.setenv(name, value)
    with pytest.raises(InvalidInput) as refused:
        endpoint.configured()
    assert refused.value.field == field


def test_a_credential_in_the_url_is_not_logged(
    server: ChatServer, waits: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    logging.getLogger("httpx").setLevel(logging.NOTSET)  # as a fresh process has it
    caplog.set_level(logging.INFO)  # as `memwork serve` logs
    server.script(completion("ok"))
    where = endpoint.Endpoint(f"{server.url}?api-key={KEY}", "m", KEY)
    assert client.chat(where, ASK, sleep=waits.append) == "ok"
    assert server.requests[0]["path"].endswith(f"?api-key={KEY}")
    assert KEY not in caplog.text


def test_a_servers_retry_after_is_honoured_within_bounds(
    server: ChatServer, waits: list[float]
) -> None:
    server.script(Reply(429, "slow down", headers={"Retry-After": "3"}), completion("ok"))
    assert _chat(server, waits) == "ok" and waits == [3.0]
    server.script(Reply(503, "", headers={"Retry-After": "3600"}), completion("ok"))
    waits.clear()
    assert _chat(server, waits) == "ok" and waits == [client.MAX_RETRY_AFTER]
    assert [client.retry_after(v) for v in (None, "soon", "-4", "nan", "0.2")] == [0, 0, 0, 0, 0.2]
