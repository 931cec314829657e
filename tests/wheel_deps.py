"""A wheel's dependencies, taken from the development venv instead of the registry.

pip would resolve and unpack every dependency into a fresh venv (about a minute, most of
it unpacking numpy, pydantic and textual again); the development venv already holds them
at versions pip chose for the same declarations. This module checks the wheel's declared
requirements against that venv and links exactly the distributions they need (their own
requirements included, transitively) into one folder, for a fresh venv to see through a
``.pth`` file. Only those distributions are linked, so code that imports a package the
wheel does not declare fails there as it would in a user's venv; a declared requirement
the development venv cannot satisfy fails the check by name.
"""

from __future__ import annotations

import importlib.metadata as md
import zipfile
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def wheel_requirements(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of a wheel's METADATA (extras' markers included)."""
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode("utf-8")
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def closure(requirements: list[str], site: Path) -> list[md.Distribution]:
    """The distributions under ``site`` that ``requirements`` need, with theirs in turn.

    Markers are evaluated for this interpreter with no extra asked for (what a plain
    ``pip install memwork`` gets); a requirement asked for with extras brings in those
    extras' requirements. Raises AssertionError naming every requirement that nothing
    under ``site`` satisfies.
    """
    found = {canonicalize_name(d.metadata["Name"]): d for d in md.distributions(path=[str(site)])}
    needed: dict[str, md.Distribution] = {}
    expanded: set[tuple[str, str]] = set()
    unmet: list[str] = []
    queue = [(text, "", "memwork") for text in requirements]
    while queue:
        text, extra, wanted_by = queue.pop()
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        dist = found.get(name)
        if dist is None or not requirement.specifier.contains(dist.version, prereleases=True):
            have = f"{dist.version} installed" if dist else "not installed"
            unmet.append(f"{wanted_by} requires {requirement} ({have} in {site})")
            continue
        needed[name] = dist
        for asked in ("", *sorted(requirement.extras)):
            if (name, asked) not in expanded:
                expanded.add((name, asked))
                queue += [(t, asked, dist.metadata["Name"]) for t in dist.requires or []]
    assert not unmet, "requirements the development venv does not satisfy:\n" + "\n".join(unmet)
    return sorted(needed.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def link(dists: list[md.Distribution], site: Path, into: Path) -> None:
    """Symlink every top-level name the distributions installed under ``site`` (packages,
    modules, their ``.dist-info``) into ``into``, so that folder on ``sys.path`` imports
    them and importlib.metadata finds their versions."""
    into.mkdir(parents=True, exist_ok=True)
    for dist in dists:
        files = dist.files
        assert files is not None, f"{dist.metadata['Name']} has no RECORD: its files are unknown"
        for top in {f.parts[0] for f in files if f.parts[0] != ".."}:
            target = into / top
            if not target.is_symlink() and (site / top).exists():
                target.symlink_to(site / top)
