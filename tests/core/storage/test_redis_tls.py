"""``rediss://``: a store over TLS, with the certificate checked (or, when told, not).

The test server speaks plain TCP, so a TLS-terminating proxy on another loopback
port stands in front of it, with a self-signed certificate for 127.0.0.1 made
by the openssl command.
"""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwork.core.doors.cli.main import main

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


class TLSProxy:
    """Accepts TLS on a loopback port and forwards the bytes to a plain TCP port."""

    def __init__(self, target_port: int, cert: Path, key: Path) -> None:
        self.target_port = target_port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            secure = self.context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError):
            client.close()  # the client refused our certificate
            return
        upstream = socket.create_connection(("127.0.0.1", self.target_port))
        threading.Thread(target=self._pump, args=(upstream, secure), daemon=True).start()
        self._pump(secure, upstream)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def proxy(redis_server, certificate: tuple[Path, Path]) -> Iterator[TLSProxy]:  # noqa: ANN001
    tls = TLSProxy(redis_server.port, *certificate)
    yield tls
    tls.close()


def _run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    sys.stdout.flush()
    out, err = capsys.readouterr()
    return code, out, err


def test_a_store_over_tls_with_the_certificate_checked(
    proxy: TLSProxy, certificate: tuple[Path, Path], redis_url: str, capsys
) -> None:  # noqa: ANN001
    db = redis_url.rsplit("/", 1)[1]
    url = f"rediss://127.0.0.1:{proxy.port}/{db}"
    checked = f"{url}?ssl_ca_certs={certificate[0]}"
    code, out, err = _run(capsys, "--db", checked, "lesson", "add", "Sent over TLS")
    assert code == 0, err
    code, out, _ = _run(capsys, "--db", redis_url, "lesson", "list")
    assert "Sent over TLS" in out  # the same database, seen over plain TCP
    # Without the CA the self-signed certificate is refused: one line, nothing written.
    code, out, err = _run(capsys, "--db", url, "lesson", "add", "never")
    assert (code, out) == (2, "")
    assert err.startswith(f"memwork: cannot reach Redis at {url}") and err.count("\n") == 1
    assert "certificate verify failed" in err.lower()
    # Told not to check, it connects (a test rig's choice, not a default).
    code, _, err = _run(capsys, "--db", f"{url}?ssl_cert_reqs=none", "lesson", "list")
    assert code == 0, err
