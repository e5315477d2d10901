"""``pip install .`` installs the package kernelviz alone (the app's pages, lessons, tests and benchmarks stay
in the repository), with its licence, and ``import kernelviz`` then works from any folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import numpy as np
import kernelviz as kv
s = kv.nadaraya_watson(np.array([0.0]), np.array([-1.0, 1.0]), np.array([0.0, 2.0]), 1.0)
print(kv.__file__)
print(float(s.mean[0]))
"""


def pip(*args: str | Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)], check=True,
                   capture_output=True, text=True, timeout=600)


def test_the_wheel_holds_the_package_only_and_imports_from_anywhere(tmp_path):
    source = tmp_path / "source"  # a copy, so that building leaves no build/ or *.egg-info in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "kernelviz", source / "kernelviz", ignore=shutil.ignore_patterns("__pycache__"))
    pip("wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", tmp_path / "dist", source)
    (wheel,) = (tmp_path / "dist").glob("kernelviz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "kernelviz/__init__.py" in names and "kernelviz/app/ui/lesson/presenter.py" in names
    kept = {"kernelviz/data/post_sample.npy", "kernelviz/app/ui/caching/kept_results.npz.xz"}  # kept results
    assert kept <= set(names)
    assert all(n.startswith(("kernelviz/", "kernelviz-")) for n in names), names  # no chapters/, tests/, …
    assert any(n.endswith("licenses/LICENSE") for n in names)
    site = tmp_path / "site"
    pip("install", "--no-deps", "--target", site, wheel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=elsewhere, env=env, check=True,
                         capture_output=True, text=True, timeout=300).stdout.split()
    assert out[0].startswith(str(site))  # the installed copy, not the checkout
    assert float(out[1]) == 1.0  # two points at equal distance: the mean of their values
