"""The build maps the source tree into one import package, ``memwork``.

The repository keeps its layout (``core/``, ``tui/``, ``data/`` at the top); an
installed memwork adds only ``memwork``: ``core/`` becomes ``memwork.core``,
``tui/`` ``memwork.tui`` and ``data/demo/`` the package data ``memwork/demo``.
Subpackages are found here, so a new one needs no edit. Folders that hold only
data (the secret rule set, the demo's snapshots) are packages too, as setuptools
expects of any importable folder; pyproject.toml says which of their files ship.
Everything else about the project is in pyproject.toml.

One C extension, ``memwork.core.services.recall._scoring``, holds the recall index's
scoring loops. It is optional: where it cannot be built (no C compiler), the install
goes on and recall scores the same records the same way in Python, only slower.
"""

import sys

from setuptools import Extension, find_packages, setup

MAPPED = {"core": "memwork.core", "tui": "memwork.tui"}

packages = ["memwork", "memwork.demo", "memwork.demo.snapshots"]
package_dir = {
    "memwork": "memwork",
    "memwork.demo": "data/demo",
    "memwork.demo.snapshots": "data/demo/snapshots",
}
for folder, name in MAPPED.items():
    package_dir[name] = folder
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]
packages.append("memwork.core.privacy.data")

# The same scores to the bit as the Python they stand for: no fused multiply-adds.
STRICT_FLOATS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]
scoring = Extension(
    "memwork.core.services.recall._scoring",
    ["core/services/recall/_scoring.c"],
    extra_compile_args=STRICT_FLOATS,
    optional=True,
)

setup(packages=packages, package_dir=package_dir, ext_modules=[scoring])
