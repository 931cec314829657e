"""memwork as users install it: a wheel built from this checkout, installed into a fresh
venv outside the checkout, adds one import name and works from there.

The wheel is built (by pip, in an isolated build env) and installed (by pip, without
its dependencies) once per run, the first xdist worker to need it doing it for all; the
fresh venv sees only the distributions the wheel's metadata asks for, linked from the
development venv after their versions are checked against it (tests/wheel_deps.py), so
an undeclared or unsatisfiable dependency still fails here. About ten seconds, where
pip's resolving and unpacking every dependency again took a minute and a half. Each test
then runs the installed `memwork` in a working directory that also holds a project of
the user's own with a `core/` package, the layout (a Django project's) that shadowed
memwork's old names.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests import wheel_deps

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")


@dataclass
class Installed:
    """A fresh venv with the wheel installed, and a user's project folder beside it."""

    wheel: Path
    bin: Path
    project: Path

    def env(self, **extra: str) -> dict[str, str]:
        # Nothing from the checkout or the development venv may leak in (the venv's
        # .pth file names the linked dependencies alone).
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL"))}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        env.update(extra)
        return env

    def run(self, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=self.project,
            env=self.env(**extra),
            timeout=300,
        )


def _shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where this run builds and installs the wheel: the run's folder that every xdist
    worker shares (so the first worker to get here builds it for all), else this
    process's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _install(shared: Path) -> tuple[Path, Path]:
    """Build the wheel of the checkout and install it into a fresh venv under ``shared``
    (once per run); return the wheel and the venv's bin folder."""
    base = shared / "install"
    dist, venv_dir = base / "dist", base / "venv"
    bin_dir = venv_dir / "bin"
    if (base / "ready").exists():
        (wheel,) = dist.glob("memwork-*.whl")
        return wheel, bin_dir
    # What a worker that failed half-way left behind is not reused.
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir()
    # The build front end users' tools run: an isolated build env with the declared
    # build requirements (the development venv's setuptools is older than those).
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        cwd=base,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = dist.glob("memwork-*.whl")
    venv.create(venv_dir, with_pip=False)
    python = str(bin_dir / "python")
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies, from the development venv: only those the wheel declares (and
    # theirs), each at a version its declaration accepts.
    dev_site = Path(sysconfig.get_path("purelib"))
    wheel_deps.link(
        wheel_deps.closure(wheel_deps.wheel_requirements(wheel), dev_site), dev_site, base / "deps"
    )
    (Path(purelib) / "memwork-test-deps.pth").write_text(f"{base / 'deps'}\n")
    env = Installed(wheel, bin_dir, base).env()
    # Before the wheel nothing supplies memwork there: not the linked dependencies, not
    # the development venv's editable install (its import hook is never set up).
    before = subprocess.run(
        [python, "-c", "import memwork"], capture_output=True, text=True, cwd=base, env=env
    )
    assert "No module named 'memwork'" in before.stderr, before.stderr
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "-q", str(wheel)],
        capture_output=True,
        text=True,
        cwd=base,
    )
    assert done.returncode == 0, done.stderr
    where = subprocess.run(
        [python, "-c", "import memwork; print(memwork.__file__)"],
        capture_output=True,
        text=True,
        cwd=base,
        env=env,
    )
    assert where.stdout.startswith(purelib), where.stdout + where.stderr
    (base / "ready").touch()
    return wheel, bin_dir


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    # pip builds in the source tree (its build/ folder): test processes that build at
    # the same moment would trip over each other's files, so they take turns; a worker
    # that finds the run's install made uses it.
    with open(tmp_path_factory.getbasetemp().parent / "wheel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wheel, bin_dir = _install(_shared_folder(tmp_path_factory))
    # A user's project with a package named core (and one named tui) of its own.
    project = tmp_path_factory.mktemp("project")
    for name in ("core", "tui"):
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text("raise ImportError('the user project')\n")
    yield Installed(wheel, bin_dir, project)


@pytest.mark.slow
def test_the_wheel_adds_one_import_name_and_carries_the_demo(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"memwork"}
    assert "memwork/demo/store.json" in names
    assert any(n.startswith("memwork/demo/snapshots/") for n in names)
    assert any(n.startswith("memwork/tui/") and n.endswith(".tcss") for n in names)
    # The scrubber's rule set, as package data, with gitleaks' licence beside it.
    assert "memwork/core/privacy/data/gitleaks_rules.jsonl" in names
    assert "memwork/core/privacy/data/LICENSE.gitleaks" in names


def test_cli_record_context_and_search_from_outside_the_checkout(installed: Installed) -> None:
    db = str(installed.project / "memory")
    episode = {
        "task_id": "deploy-api",
        "score": 0.3,
        "steps": 9,
        "summary": "Rolled back after the canary failed health checks",
        "mistakes": ["Skipped the canary stage"],
        # A token of a format only the packaged rule set knows: redacted from the wheel too.
        "successes": ["pushed with " + "glpat-" + "jdhvf426cphd9z1gk9re"],
    }
    recorded = installed.run("memwork", "record-episode", stdin=json.dumps(episode), MEMWORK_DB=db)
    assert recorded.returncode == 0, recorded.stderr
    context = installed.run("memwork", "context", "--task", "deploy-api", MEMWORK_DB=db)
    assert context.returncode == 0, context.stderr
    assert "Skipped the canary stage" in context.stdout
    found = installed.run("memwork", "search", "canary", "--json", MEMWORK_DB=db)
    assert found.returncode == 0, found.stderr
    assert any(hit["kind"] == "episode" for hit in json.loads(found.stdout))
    exported = installed.run("memwork", "export", MEMWORK_DB=db).stdout
    assert "jdhvf426cphd9z1gk9re" not in exported and "[redacted:gitlab-pat]" in exported
    assert installed.run("memwork", "--version").stdout.startswith("memwork ")


def test_python_api_from_outside_the_checkout(installed: Installed) -> None:
    probe = (
        "import sys; from memwork import Memory; "
        "m = Memory(sys.argv[1]); m.add_lesson('Canary every deploy for fifteen minutes'); "
        "print(m.context()); "
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('core', 'tui', 'tests')))"
    )
    done = installed.run("python", "-c", probe, str(installed.project / "api"))
    assert done.returncode == 0, done.stderr
    assert "Canary every deploy" in done.stdout
    assert done.stdout.rstrip().endswith("[]")


def test_mcp_server_lists_its_tools(installed: Installed) -> None:
    params = StdioServerParameters(
        command=str(installed.bin / "memwork"),
        args=["mcp"],
        env=installed.env(MEMWORK_DB=str(installed.project / "mcp")),
        cwd=str(installed.project),
    )

    async def main() -> list[str]:
        async with Client(params, cache=None) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    tools = anyio.run(main)
    assert {"get_context", "record_episode", "search"} <= set(tools)


def _read_until(fd: int, needle: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


@pytest.mark.slow
def test_demo_opens_from_the_installed_wheel(installed: Installed) -> None:
    master, slave = os.openpty()
    child = subprocess.Popen(
        [str(installed.bin / "memwork"), "--demo"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=installed.project,
        env=installed.env(TERM="xterm-256color", COLUMNS="100", LINES="30"),
        start_new_session=True,
    )
    os.close(slave)
    try:
        # Bounds for a stuck start, not timing expectations.
        screen = _read_until(master, b"Sessions", 120)
        assert b"Sessions" in screen, screen[-800:]
        assert b"missing" not in screen
        # q quits; a key sent before the app reads its terminal is lost, so ask again
        # until it has gone.
        after = b""
        for _ in range(60):
            os.write(master, b"q")
            after += _read_until(master, b"\x00", 2)
            if child.poll() is not None:
                break
        code = child.wait(timeout=10)
        # What the terminal showed last (a traceback or a one-line error) says why.
        assert code == 0, (screen + after + _read_until(master, b"\x00", 1))[-3000:]
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
            child.wait()
