"""Tests for core.privacy: what must be redacted, what must survive, and the API contract."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.privacy import (
    PERSONAL_KINDS,
    find_secrets,
    scrub,
    scrub_value,
    secret_kinds,
)


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

_HEX32 = "0123456789abcdef0123456789abcdef"
_B64_88 = _k(
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
    "/K1SZFPTOtr/KBHBeksoGMGw==",
)

# (what it is, marker kind, text, sensitive substring that must not survive)
SECRETS: list[tuple[str, str, str, str]] = [
    ("OpenAI key", "api_key", "export OPENAI_API_KEY={} before the run", _k("sk-", _B62, "Qx7Zp")),
    ("OpenAI project key", "api_key", "the project key is {}.", _k("sk-proj-", _B62, "_Zp9-Qa1")),
    ("OpenAI legacy key", "api_key", "key {}", _k("sk-", _B62[:20], "T3Blbk", "FJ", _B62[:20])),
    ("Anthropic key", "api_key", "ANTHROPIC_API_KEY={}", _k("sk-ant-api03-", _B62, "-AbCdEf12")),
    (
        "Stripe live secret key",
        "api_key",
        "stripe live key {} in .env",
        _k("sk_", "live_", "51HxYz", _B62[:20]),
    ),
    (
        "Stripe restricted key",
        "api_key",
        "restricted key {}",
        _k("rk_", "live_", "51HxYz", _B62[:20]),
    ),
    (
        "Stripe publishable key",
        "api_key",
        "publishable key {}",
        _k("pk_", "live_", "51HxYz", _B62[:20]),
    ),
    ("Stripe test key", "api_key", "test mode uses {}", _k("sk_", "test_", "4eC39Hq", _B62[:16])),
    ("Stripe webhook secret", "token", "webhook secret {}", _k("whsec_", _B62)),
    ("Google API key", "api_key", "maps?key={}&q=paris", _k("AIza", "SyD-", _B62[:31])),
    ("GCP OAuth client secret", "generic-api-key", "client_secret: {}", _k("GOCSPX-", _B62[:28])),
    ("GitHub classic PAT", "generic-api-key", "GH_TOKEN={}", _k("ghp_", _B62, "Ab")),
    ("GitHub OAuth token", "token", "oauth token {} expired", _k("gho_", _B62, "Cd")),
    ("GitHub user-to-server token", "token", "user-to-server {}", _k("ghu_", _B62, "Ef")),
    ("GitHub app token", "token", "the app used {} for the push", _k("ghs_", _B62, "Gh")),
    ("GitHub refresh token", "token", "refresh with {}", _k("ghr_", _B62, "Ij")),
    (
        "GitHub fine-grained PAT",
        "token",
        "fine-grained PAT {}",
        _k("github_pat_", "11ABCDEFG0", _B62, "_", _B62),
    ),
    ("GitLab PAT", "gitlab-pat", "GITLAB_TOKEN={}", _k("glpat-", _B62[:20])),
    (
        "Slack bot token",
        "slack-bot-token",
        "bot token {} posts to #ops",
        _k("xox", "b-1234567890-", "0987654321-", _B62),
    ),
    (
        "Slack user token",
        "generic-api-key",
        "user token: {}",
        _k("xox", "p-1234567890-", "1111-", _B62),
    ),
    (
        "Slack app token",
        "slack-legacy-workspace-token",
        "app token {}",
        _k("xox", "a-2-", "1234567890-", _B62),
    ),
    (
        "Slack refresh token",
        "slack-legacy-workspace-token",
        "refresh token {}",
        _k("xox", "r-", _B62),
    ),
    (
        "Slack webhook URL",
        "slack-webhook-url",
        "post to {}",
        _k("https://hooks.slack", ".com/services/T0ABCDEF1/B0ABCDEF2/", _B62[:24]),
    ),
    ("AWS access key id", "secret", "aws_access_key_id = {}", _k("AKIA", "IOSFODNN7EXAMPLE")),
    (
        "AWS temporary key id",
        "aws-access-token",
        "temporary creds {} from STS",
        _k("ASIA", "Y34FZKBOKMUTVV7A"),
    ),
    (
        "AWS secret access key",
        "secret",
        "aws_secret_access_key = {}",
        _k("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"),
    ),
    (
        "AWS secret key in an env line",
        "secret",
        "export AWS_SECRET_ACCESS_KEY={}",
        _k("je7MtGbClwBF/2Zp9Utk/", "h3yCo8nvbEXAMPLEKEY"),
    ),
    (
        "AWS session token",
        "generic-api-key",
        "aws_session_token = {}",
        _k("FwoGZXIvYXdzEBYaDNQ3hWr8Qx2b", _B62, "Kj9zLmQ4"),
    ),
    (
        "Azure storage connection string",
        "generic-api-key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={};EndpointSuffix=core.windows.net",
        _B64_88,
    ),
    (
        "Azure SAS signature",
        "sas_signature",
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2026-01-01&sp=r&sig={}",
        "Xk3%2Bq9ZrT1mW8pLd0vN4yQe7sJ2bH6cFgA5uR%3D",
    ),
    ("JWT", "jwt", "session cookie was {} yesterday", _JWT),
    (
        "Bearer token",
        "bearer",
        "curl -H 'Authorization: Bearer {}' https://api.example.com",
        "abc123def456ghi789",
    ),
    ("bearer value in prose", "bearer", "send bearer {} with each call", "tok_9f8e7d6c5b4a3210"),
    ("Bearer JWT", "bearer", "Authorization: Bearer {}", _JWT),
    ("Basic auth header", "basic_auth", "header Authorization: Basic {}", "dXNlcjpwYXNzd29yZA=="),
    (
        "RSA private key",
        "private_key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
        _PEM_BODY,
    ),
    (
        "OpenSSH private key",
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        _PEM_BODY,
    ),
    (
        "PKCS#8 private key, CRLF",
        "private_key",
        "-----BEGIN PRIVATE KEY-----\r\n{}\r\n-----END PRIVATE KEY-----",
        _PEM_BODY,
    ),
    (
        "truncated EC private key",
        "private_key",
        "truncated paste: -----BEGIN EC PRIVATE KEY-----\n{}\n...",
        _PEM_BODY,
    ),
    (
        "git URL credentials",
        "credentials",
        "clone https://{}@example.com/team/repo.git",
        "alice:hunter2",
    ),
    (
        "Postgres URL",
        "credentials",
        "DATABASE_URL=postgres://{}@db.internal:5432/app",
        "admin:s3cr3t",
    ),
    (
        "token in a git remote",
        "credentials",
        "remote https://{}@github.com/o/r",
        _k("x-access-token:ghs_", _B62, "Zz"),
    ),
    ("URL password with @", "credentials", "odd password https://{}@host.example/", "bob:p@ss"),
    ("Redis URL password", "credentials", "redis://:{}@cache:6379/0", "s3cr3tRedisPw"),
    ("MongoDB SRV URL", "credentials", "mongodb+srv://{}@cluster0.mongodb.net", "app:Mongo9Pw"),
    (
        "Sentry DSN key",
        "credentials",
        "SENTRY_DSN=https://{}@o123456.ingest.sentry.io/789",
        "abcdef0123456789abcdef0123456789",
    ),
    ("PASSWORD= line", "password", "PASSWORD={}", "hunter2rocks"),
    ("DB_PASSWORD= line", "password", "DB_PASSWORD={}", "S3cr3tP4ss!"),
    ("API_KEY= line", "generic-api-key", "API_KEY={}", "a1b2c3d4e5f6g7h8"),
    ("SECRET_KEY= line", "secret", "SECRET_KEY={}", "django-insecure-7h1s1s4s3cr3t"),
    ("passwd= line", "password", "passwd={}", "letmein99"),
    ("YAML password", "password", "password: {}", "Xy7!pQ2#"),
    ("quoted passphrase in JSON", "password", '{{"password": "{}"}}', "correct horse battery"),
    ("Python password assignment", "password", "db_pass = '{}'", "hunter22"),
    ("password in a connection string", "password", "Server=db;User Id=app;Password={};", "Pw9!zQ"),
    ("private key id", "secret", "private_key_id = {}", "8f14e45fceea167a5a36dedd4bea2543"),
    ("client_secret= line", "generic-api-key", "client_secret={}", _k("p9Q", _B62[:25])),
    ("*_TOKEN= env line", "generic-api-key", "export GITHUB_TOKEN={}", "k8Jd92LmQz4Xp0Vn"),
    ("CI job token", "generic-api-key", "CI_JOB_TOKEN={}", _k("Zx9", _B62[:20])),
    ("API key header", "generic-api-key", "X-API-Key: {}", _k("f3", _B62[:30])),
    ("session cookie", "secret", "Cookie: sessionid={}", _k("q8", _B62[:28])),
    ("--password= flag", "password", "mysql --user=root --password={} db", "Tr0ub4dor&3"),
    ("--db-password flag", "password", "--db-password {}", "Qwerty!234"),
    ("sshpass -p", "password", "sshpass -p {} ssh deploy@host", "Pa55w0rdX"),
    ("sshpass -p quoted", "password", "sshpass -p '{}' scp f host:", "my pass phrase"),
    ("mysql -p", "password", "mysql -uroot -p{} app", "R00tPw9z"),
    ("Hugging Face token", "token", "HF_TOKEN {}", _k("hf_", _B62)),
    ("npm token", "generic-api-key", "//registry.npmjs.org/:_authToken={}", _k("npm_", _B62, "ab")),
    ("PyPI token", "pypi-upload-token", "password = {}", _k("pypi-AgEIcHlwaS5vcmc", _B62, _B62)),
    ("SendGrid key", "token", "key is {}", _k("SG.", _B62[:22], ".", _B62, _B62[:9])),
    ("Twilio API key", "twilio-api-key", "twilio api key {}", _k("SK", _HEX32)),
    ("Twilio account SID", "twilio-account-sid", "auth token {} for account", _k("AC", _HEX32)),
    # The bot's id before the colon is public; the part after it is the secret.
    ("Telegram bot token", "generic-api-key", "bot token 123456789:{}", _k("AA", _B62[:33])),
    (
        "Discord bot token",
        "discord-bot-token",
        "discord bot {}",
        _k("MTk4NjIyNDgzNDcxOTI1MjQ4", ".Cl2FMQ.", "ZnCjm1XVW7vRze4b7Cq4se7kKWs"),
    ),
    ("Mailchimp key", "mailchimp-key", "mailchimp {}", _k(_HEX32, "-us6")),
    ("Square access token", "square-access-token", "square {}", _k("sq0atp-", _B62[:22])),
    ("Artifactory token", "artifactory-token", "artifactory token {}", _k("AKCp", _B62, _B62)),
    ("DigitalOcean token", "digitalocean-pat", "DO token {}", _k("dop_v1_", _HEX32, _HEX32)),
    ("Vault token", "generic-api-key", "VAULT_TOKEN={}", _k("hvs.", _B62, "Qq")),
    ("Shopify token", "shopify-access-token", "shopify {}", _k("shpat_", _HEX32)),
    ("Groq key", "token", "GROQ key {}", _k("gsk_", _B62, _B62[:18])),
    ("Visa card", "card_number", "card {} exp 12/29", "4111 1111 1111 1111"),
    ("Mastercard", "card_number", "paid with {}", "5500-0000-0000-0004"),
    ("American Express", "card_number", "amex {}", "378282246310005"),
    ("e-mail address", "email", "ping {} about the release", "alice.smith@example.com"),
    ("tagged e-mail address", "email", "<{}>", "first+tag@mail.sub.example.co.uk"),
    ("private IPv4", "ipv4", "the box at {} is down", "192.168.1.20"),
    ("IPv4 with port", "ipv4", "connect to {}:8080 now", "10.0.0.5"),
    ("public IPv4", "ipv4", "resolver is {}.", "8.8.8.8"),
    ("IPv6", "ipv6", "address {} is reachable", "2001:db8::8a2e:370:7334"),
    ("link-local IPv6", "ipv6", "link-local {}.", "fe80::1"),
    ("full IPv6", "ipv6", "full form {} here", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
    ("IPv6 in a URL", "ipv6", "open http://[{}]:8080/ in a browser", "2001:db8::1"),
    ("scoped IPv6", "ipv6", "scoped {} on the LAN", "fe80::1ff:fe23:4567:890a%eth0"),
    ("IPv4-mapped IPv6", "ipv6", "mapped {} seen", "::ffff:192.0.2.128"),
    ("Linux home", "home_path", "logs in /home/{}/projects/memwork/out.log", "alice"),
    ("macOS home", "home_path", "open /Users/{}/Library/Caches", "bob"),
    ("Windows home", "home_path", r"saved to C:\Users\{}\Documents\a.txt", "carol"),
    ("Windows home, slashes", "home_path", "saved to C:/Users/{}/AppData/x", "carol"),
    ("Windows home in JSON", "home_path", r'"path": "C:\\Users\\{}\\Desktop"', "dave"),
    ("Windows home with a space", "home_path", r"see C:\Users\{}\Desktop", "John Smith"),
    ("home in PATH", "home_path", "PATH=/usr/bin:/home/{}/.local/bin", "erin.o-neil"),
    ("home in a file URL", "home_path", "file:///home/{}/notes.md", "frank"),
]
PERSONAL = {"email", "ipv4", "ipv6", "home_path"}


@pytest.mark.parametrize(("what", "kind", "template", "secret"), SECRETS)
def test_secret_is_redacted(what: str, kind: str, template: str, secret: str) -> None:
    text = template.format(secret)
    out = scrub(text)
    assert secret not in out
    assert f"[redacted:{kind}]" in out
    assert any(k == kind and secret in found for k, found in find_secrets(text))


def test_secret_corpus_is_large_and_uses_known_kinds() -> None:
    secrets = {what for what, kind, _, _ in SECRETS if kind not in PERSONAL}
    assert len(secrets) >= 60
    assert len({what for what, *_ in SECRETS}) == len(SECRETS)
    assert {kind for _, kind, _, _ in SECRETS} <= secret_kinds() | PERSONAL_KINDS
    assert PERSONAL == PERSONAL_KINDS and not PERSONAL & secret_kinds()


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
    # Near misses for the keyword, entropy and vendor detectors.
    "The password policy says: rotate every 90 days.",
    "Forgot the password: used the reset flow instead.",
    "Set PASSWORD in the environment, never in code.",
    "password = os.environ['DB_PASSWORD']",
    "API_KEY=${API_KEY}",
    "PASSWORD=<your password>",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "The API key is read from the vault at startup.",
    "secret_key = settings.SECRET_KEY",
    "merge 9fceb02d0ae598e95dc970b74767f19372d61af8 into main",
    "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
    "ordered 1234 5678 widgets on 2024-05-17; order 4111-2222-3333",
    "call +1 555 0100 1234 tomorrow; build 20240517123045 passed",
    "use sshpass only with -f file, never -p; mysql -u root -p prompts for it",
    "image sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "ThisIsAVeryLongCamelCaseIdentifierName2 compiles",
    "tests/core/test_privacy.py::test_ordinary_text_is_byte_identical passed",
    "/usr/local/lib/python3.11/site-packages/detect_secrets/core/scan.py",
    "See https://github.com/Yelp/detect-secrets/blob/master/README.md",
    "docker pull ghcr.io/org/image:v1.2.3-alpine3.19",
    "key: value pairs are stored as JSON; the primary key: id",
    "sort key = lambda x: x[1]",
    "base64 of hello is aGVsbG8=",
    "max_tokens: 4096, temperature: 0.2, tokens: 1834",
    "auth: disabled for local runs; author: Jane",
    "secret sauce: caching the aggregates",
    "He passed: all 42 tests green",
    "https://example.com/search?q=hello&sig=abc",
    "pip install detect-secrets==1.5.0",
    "ids ep_01JD3Q5K8ZP4XW2M7N9R6T1VBC and les_01JD3Q5K8ZP4XW2M7N9R6T1VBD",
    "ratio 16:9, 1920x1080, 60fps; ISBN 978-3-16-148410-0",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_byte_identical(text: str) -> None:
    assert scrub(text) == text
    assert find_secrets(text) == []


def test_ordinary_corpus_is_large() -> None:
    assert len(ORDINARY) >= 60


@pytest.mark.parametrize(("what", "kind", "template", "secret"), SECRETS)
def test_curated_text_keeps_personal_details_only(
    what: str, kind: str, template: str, secret: str
) -> None:
    text = template.format(secret)
    out = scrub(text, personal=False)
    if kind in PERSONAL:
        assert out == text
    else:
        assert secret not in out and f"[redacted:{kind}]" in out


def _rules_compiled(texts: list[str]) -> list[str]:
    """The rules whose patterns scrubbing ``texts`` compiles, in a fresh interpreter."""
    import json
    import subprocess
    import sys

    from tests.conftest import python_env

    code = (
        "import json, sys\n"
        "from memwork.core.privacy import scrub\n"
        "from memwork.core.privacy.gitleaks import rule_set\n"
        "for t in json.load(sys.stdin): scrub(t)\n"
        "print(json.dumps(sorted(r.id for r in rule_set()._rules.values() if 'scan' in vars(r))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        env=python_env(),
        check=True,
    )
    compiled: list[str] = json.loads(done.stdout)
    return compiled


def test_clean_text_compiles_few_rules(tmp_path) -> None:  # noqa: ANN001
    # Compiling a rule's pattern costs ~1 ms, and `memwork context` rescans text that was
    # scrubbed on the way in on every agent step: an agent's context must compile only
    # the few rules whose keywords such text really holds ("key", "token").
    import shutil
    from pathlib import Path

    from memwork.core.services.context.build import build_context
    from memwork.core.storage.store import Store
    from tests.conftest import NOW

    store = tmp_path / "demo"
    shutil.copytree(Path(__file__).resolve().parents[3] / "data" / "demo", store)
    lines: list[str] = []
    for task in ("deploy-api", "fix-flaky-test", None):
        lines += build_context(Store(store), now=NOW, task_id=task).text.splitlines()
    assert len(lines) > 50
    compiled = _rules_compiled(lines)
    assert len(compiled) <= 4, compiled
    assert "generic-api-key" in _rules_compiled(["DB_PASSWORD=S3cr3tP4ss!"])  # the control


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("clear\x1b[2J screen", "clear screen"),
        ("title\x1b]0;owned\x07 set", "title set"),
        ("osc with ST\x1b]52;c;aGk=\x1b\\ end", "osc with ST end"),
        ("bell\x07 ring", "bell ring"),
        ("colour \x1b[31mred\x1b[0m", "colour red"),
        ("c1 csi \x9b2J", "c1 csi "),
        ("overwrite\rfake", "overwritefake"),
        ("nul\x00 and del\x7f", "nul and del"),
        ("keeps\ttabs\nnewlines\r\nand CRLF", "keeps\ttabs\nnewlines\r\nand CRLF"),
    ],
)
def test_control_characters_are_removed(text: str, expected: str) -> None:
    assert scrub(text) == expected
    assert scrub(text, personal=False) == expected


def test_redactions_are_counted_per_kind() -> None:
    from memwork.core.privacy import counting

    with counting() as tally:
        scrub("mail alice@example.com and bob@example.com, PASSWORD=hunter2rocks")
        scrub("slot alice@example.com", personal=False)
        assert tally.take_pending() == {"email": 2, "password": 1}
        scrub("again " + _k("sk-", _B62[:24]))
    assert tally.counts() == {"api_key": 1, "email": 2, "password": 1}
    assert tally.take_pending() == {"api_key": 1}
    assert tally.describe() == "4 redactions (api_key 1, email 2, password 1)"


def test_short_sk_tail_is_not_a_key() -> None:
    assert scrub("sk-short-name") == "sk-short-name"
    assert scrub(_k("sk-", _B62[:24])) == "[redacted:api_key]"


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
    assert scrub_value(_k("sk-", _B62[:24])) == "[redacted:api_key]"
    assert scrub_value(7) == 7


@pytest.mark.parametrize("text", [t.format(s) for _, _, t, s in SECRETS])
def test_scrub_is_idempotent_on_corpus(text: str) -> None:
    once = scrub(text)
    assert scrub(once) == once
    assert find_secrets(once) == []


_FRAGMENTS = (
    [t.format(s) for _, _, t, s in SECRETS]
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


@pytest.mark.slow
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
    _, kind, template, secret = case
    text = "\n".join([*before, template.format(secret), *after])
    out = scrub(text)
    assert secret not in out
    assert f"[redacted:{kind}]" in out


@pytest.mark.slow
def test_every_secret_beside_every_ordinary_line_is_redacted_as_its_kind() -> None:
    """Every pair, not a sample: "PASSWORD=<your password>" before a line once hid the
    next line's secret from its rule (a rejected match swallowed the keyword after it)."""
    wrong = []
    for line in ORDINARY:
        for _, kind, template, secret in SECRETS:
            written = template.format(secret)
            for text in (f"{line}\n{written}", f"{written}\n{line}", f"{line} {written}"):
                out = scrub(text)
                if secret in out or f"[redacted:{kind}]" not in out:
                    wrong.append((text, out))
    assert wrong == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ORDINARY), max_size=5))
def test_ordinary_lines_joined_stay_identical(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert scrub(text) == text
