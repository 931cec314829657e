"""Tests for core.privacy: what must be redacted, what must survive, and the API contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.privacy import KINDS, find_secrets, scrub, scrub_value


def _k(*parts: str) -> str:
    # Fixtures are assembled from pieces so secret scanners (push protection, pre-commit
    # hooks) never see a whole token-shaped literal in this file.
    return "".join(parts)


_B62 = "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xYz"  # 34 key-like characters
_PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
_JWT = _k(
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFsaWNlIn0",
    ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
)

# (kind, text, sensitive substring that must not survive)
SECRETS: list[tuple[str, str, str]] = [
    ("api_key", "export OPENAI_API_KEY={} before the run", _k("sk-", _B62, "Qx7Zp")),
    ("api_key", "the project key is {}.", _k("sk-proj-", _B62, "_Zp9-Qa1")),
    ("api_key", "ANTHROPIC_API_KEY={}", _k("sk-ant-api03-", _B62, "-AbCdEf12")),
    ("api_key", "stripe live key {} in .env", _k("sk_", "live_", "51HxYz", _B62[:20])),
    ("api_key", "restricted key {}", _k("rk_", "live_", "51HxYz", _B62[:20])),
    ("api_key", "publishable key {}", _k("pk_", "live_", "51HxYz", _B62[:20])),
    ("api_key", "test mode uses {}", _k("sk_", "test_", "4eC39Hq", _B62[:16])),
    ("api_key", "maps?key={}&q=paris", _k("AIza", "SyD-", _B62[:31])),
    ("github_token", "GH_TOKEN={}", _k("ghp_", _B62, "Ab")),
    ("github_token", "oauth token {} expired", _k("gho_", _B62, "Cd")),
    ("github_token", "user-to-server {}", _k("ghu_", _B62, "Ef")),
    ("github_token", "the app used {} for the push", _k("ghs_", _B62, "Gh")),
    ("github_token", "refresh with {}", _k("ghr_", _B62, "Ij")),
    ("github_token", "fine-grained PAT {}", _k("github_pat_", "11ABCDEFG0", _B62, "_", _B62)),
    ("slack_token", "bot token {} posts to #ops", _k("xox", "b-1234567890-", "0987654321-", _B62)),
    ("slack_token", "user token: {}", _k("xox", "p-1234567890-", "1111-", _B62)),
    ("slack_token", "app token {}", _k("xox", "a-2-", "1234567890-", _B62)),
    ("slack_token", "refresh token {}", _k("xox", "r-", _B62)),
    ("aws_key", "aws_access_key_id = {}", _k("AKIA", "IOSFODNN7EXAMPLE")),
    ("aws_key", "temporary creds {} from STS", _k("ASIA", "Y34FZKBOKMUTVV7A")),
    ("jwt", "session cookie was {} yesterday", _JWT),
    ("bearer", "curl -H 'Authorization: Bearer {}' https://api.example.com", "abc123def456ghi789"),
    ("bearer", "send bearer {} with each call", "tok_9f8e7d6c5b4a3210"),
    ("bearer", "Authorization: Bearer {}", _JWT),
    ("basic_auth", "header Authorization: Basic {}", "dXNlcjpwYXNzd29yZA=="),
    (
        "private_key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
        _PEM_BODY,
    ),
    (
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        _PEM_BODY,
    ),
    ("private_key", "-----BEGIN PRIVATE KEY-----\r\n{}\r\n-----END PRIVATE KEY-----", _PEM_BODY),
    ("private_key", "truncated paste: -----BEGIN EC PRIVATE KEY-----\n{}\n...", _PEM_BODY),
    ("credentials", "clone https://{}@example.com/team/repo.git", "alice:hunter2"),
    ("credentials", "DATABASE_URL=postgres://{}@db.internal:5432/app", "admin:s3cr3t"),
    ("credentials", "remote https://{}@github.com/o/r", _k("x-access-token:ghs_", _B62, "Zz")),
    ("credentials", "odd password https://{}@host.example/", "bob:p@ss"),
    ("email", "ping {} about the release", "alice.smith@example.com"),
    ("email", "<{}>", "first+tag@mail.sub.example.co.uk"),
    ("ipv4", "the box at {} is down", "192.168.1.20"),
    ("ipv4", "connect to {}:8080 now", "10.0.0.5"),
    ("ipv4", "resolver is {}.", "8.8.8.8"),
    ("ipv6", "address {} is reachable", "2001:db8::8a2e:370:7334"),
    ("ipv6", "link-local {}.", "fe80::1"),
    ("ipv6", "full form {} here", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("ipv6", "open http://[{}]:8080/ in a browser", "2001:db8::1"),
    ("ipv6", "scoped {} on the LAN", "fe80::1ff:fe23:4567:890a%eth0"),
    ("ipv6", "mapped {} seen", "::ffff:192.0.2.128"),
    ("home_path", "logs in /home/{}/projects/memwork/out.log", "alice"),
    ("home_path", "open /Users/{}/Library/Caches", "bob"),
    ("home_path", r"saved to C:\Users\{}\Documents\a.txt", "carol"),
    ("home_path", "saved to C:/Users/{}/AppData/x", "carol"),
    ("home_path", r'"path": "C:\\Users\\{}\\Desktop"', "dave"),
    ("home_path", r"see C:\Users\{}\Desktop", "John Smith"),
    ("home_path", "PATH=/usr/bin:/home/{}/.local/bin", "erin.o-neil"),
    ("home_path", "file:///home/{}/notes.md", "frank"),
]


@pytest.mark.parametrize(("kind", "template", "secret"), SECRETS)
def test_secret_is_redacted(kind: str, template: str, secret: str) -> None:
    text = template.format(secret)
    out = scrub(text)
    assert secret not in out
    assert f"[redacted:{kind}]" in out
    assert any(k == kind and secret in found for k, found in find_secrets(text))


def test_secret_corpus_is_large_and_uses_known_kinds() -> None:
    assert len(SECRETS) >= 35
    assert {kind for kind, _, _ in SECRETS} | {"private"} == KINDS


def test_context_around_secrets_is_kept() -> None:
    assert scrub("https://alice:pw@example.com/x") == "https://[redacted:credentials]@example.com/x"
    assert scrub("/home/alice/src/app.py:12") == "[redacted:home_path]/src/app.py:12"
    assert scrub("C:/Users/carol/AppData") == "[redacted:home_path]/AppData"
    # Only the user's own segment goes; a later "home" directory is just a directory name.
    assert scrub("/home/alice/home/bob/x") == "[redacted:home_path]/home/bob/x"
    assert scrub(r"C:\Users\John Smith\x y") == r"[redacted:home_path]\x y"
    assert scrub(r"C:\Users\carol is here") == "[redacted:home_path] is here"
    assert scrub("Authorization: Bearer abc123def456") == "Authorization: Bearer [redacted:bearer]"
    assert scrub("at 10.0.0.5:8080.") == "at [redacted:ipv4]:8080."
    assert scrub("mail alice@example.com.") == "mail [redacted:email]."
    pem = "a\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\nb"
    assert scrub(pem) == "a\n[redacted:private_key]\nb"


ORDINARY: list[str] = [
    "",
    "Upgraded the interpreter to python 3.11.7 today.",
    "Released v2.0.1; next is v2.1.0-rc1.",
    "pin numpy==1.26.4 and pandas>=2.1,<3",
    "See https://docs.python.org/3/library/re.html for details.",
    "Run the API at http://localhost:8000/api?x=1 locally.",
    "def f(a, b): return a[1::2]",
    "xs[10::20], ys[::-1], zs[1:2:3]",
    "std::vector<int> v; std::map<K, V> m; Face::Add(x);",
    "ls -la /usr/local/bin",
    "/tmp/build/output.log",
    "cd /home",
    "git commit -m 'fix'",
    "Meeting at 12:30:45 on 2024-05-17, ratio 3:2, John 3:16.",
    "Timestamp 2024-05-17T12:30:45.123Z",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "the task-sk-planner module and a risk-free desk-lamp",
    "# Heading\n\n- item **bold** `code`\n\n> quote [link](https://example.com/docs)",
    '{"name": "memwork", "version": "0.1.0", "tags": ["a", "b"], "ok": true}',
    "learning rate 1.5e-3, eps=1e-8, weight 0.25",
    "Use @property and @dataclass; npm i @types/node@20.11.5",
    "result = weights @ inputs.T",
    "Bearer tokens are described in RFC 6750; the bearer of bad news.",
    "The Authorization header must be set; basic auth is disabled.",
    "See https://api.github.com/users/octocat and https://example.com/home/about",
    "git clone git@github.com:org/repo.git or ssh://git@github.com/org/repo.git",
    "MAC 00:1a:2b:3c:4d:5e, OID 1.3.6.1.4.1.311, build v1.2.3.4, 999.1.1.1",
    "dev server on 127.0.0.1:8000 and [::1]:8000, bind 0.0.0.0",
    "The ASIA region; AKIA alone is not a key; eyJ is base64 for '{\"'.",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
    r"C:\Program Files\Python311\python.exe and C:\Windows\System32",
    "a <privateer> sailed; /Users alone; /home/ alone",
    "Café naïve 日本語 — emoji 🎉 and tabs\tand\r\nCRLF",
    "user@localhost has no TLD",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_byte_identical(text: str) -> None:
    assert scrub(text) == text
    assert find_secrets(text) == []


def test_ordinary_corpus_is_large() -> None:
    assert len(ORDINARY) >= 30


def test_short_sk_tail_is_not_a_key() -> None:
    assert scrub("sk-short-name") == "sk-short-name"
    assert scrub(_k("sk-", "a" * 20)) == "[redacted:api_key]"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Keep <private>salary 100k</private> out", "Keep out"),
        ("Keep <PRIVATE>x</Private>out", "Keep out"),
        ("<private>x</private> starts", "starts"),
        ("a<private>\nmulti\nline\n</private>b", "ab"),
        ('a <private reason="pii">x</private> b', "a b"),
        ("note <private>the rest\nof the text", "note "),
        ("a <private>x <private>y</private> z</private> b", "a b"),
        ("<pri<private>x</private>vate>secret", ""),
        ("stray </private> closer stays", "stray </private> closer stays"),
    ],
)
def test_private_spans_are_removed(text: str, expected: str) -> None:
    assert scrub(text) == expected


def test_private_span_is_removed_before_other_rules() -> None:
    assert scrub("mail <private>alice@example.com</private> later") == "mail later"


def test_find_secrets_reports_kinds_and_matches() -> None:
    text = "ping alice@example.com from 10.1.2.3 <private>hush</private> in /home/alice/x"
    assert find_secrets(text) == [
        ("private", "<private>hush</private>"),
        ("email", "alice@example.com"),
        ("ipv4", "10.1.2.3"),
        ("home_path", "/home/alice"),
    ]


def test_scrub_value_recurses_and_returns_new_structures() -> None:
    value = {
        "alice@example.com": "owner alice@example.com",
        "nested": [{"ip": "10.0.0.5"}, ("at /home/bob/x", 3)],
        "n": 1.5,
        "none": None,
        "flag": True,
    }
    out = scrub_value(value)
    assert out == {
        "alice@example.com": "owner [redacted:email]",
        "nested": [{"ip": "[redacted:ipv4]"}, ("at [redacted:home_path]/x", 3)],
        "n": 1.5,
        "none": None,
        "flag": True,
    }
    assert value["nested"][0] == {"ip": "10.0.0.5"}  # input untouched
    assert out["nested"] is not value["nested"]
    assert scrub_value("sk-" + "x" * 24) == "[redacted:api_key]"
    assert scrub_value(7) == 7


@pytest.mark.parametrize("text", [t.format(s) for _, t, s in SECRETS])
def test_scrub_is_idempotent_on_corpus(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once
    assert find_secrets(once) == []


_FRAGMENTS = (
    [t.format(s) for _, t, s in SECRETS]
    + ORDINARY
    + [
        "<private>",
        "</private>",
        "/home/",
        "@",
        "::",
        ":",
        ".",
        "sk-",
        "Bearer ",
        "-----BEGIN RSA PRIVATE KEY-----",
        "[redacted:email]",
    ]
)
_SEPARATORS = st.sampled_from(["", " ", "\n", "/", ":", ".", "@", "-", "_", "a", "1"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_FRAGMENTS), _SEPARATORS), max_size=6))
def test_scrub_is_idempotent_on_spliced_fragments(parts: list[tuple[str, str]]) -> None:
    text = "".join(a + b for a, b in parts)
    once = scrub(text)
    assert scrub(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aAfF09.:/@-_<>[] \nsk\\eyJUsers"), max_size=80))
def test_scrub_is_idempotent_on_random_text(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(ORDINARY), max_size=4),
    st.sampled_from(SECRETS),
    st.lists(st.sampled_from(ORDINARY), max_size=4),
)
def test_secrets_never_survive_in_context(
    before: list[str], case: tuple[str, str, str], after: list[str]
) -> None:
    kind, template, secret = case
    text = "\n".join([*before, template.format(secret), *after])
    out = scrub(text)
    assert secret not in out
    assert f"[redacted:{kind}]" in out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ORDINARY), max_size=5))
def test_ordinary_lines_joined_stay_identical(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert scrub(text) == text
