"""What the app installs is what the tests run: requirements.txt (the lock Streamlit Community Cloud
installs), requirements-dev.txt (the same lock plus the test tools) and pyproject.toml's ranges agree, and
this environment has exactly the locked versions."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def lock(name: str) -> dict[str, Requirement]:
    """The pins of a lock file, by canonical package name."""
    lines = (ROOT / name).read_text().splitlines()
    reqs = [Requirement(line) for line in lines if line.strip() and not line.lstrip().startswith(("#", "-"))]
    return {canonicalize_name(r.name): r for r in reqs}


def pinned(req: Requirement) -> str:
    (spec,) = req.specifier
    assert spec.operator == "==", f"{req} is not pinned to one version"
    return spec.version


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


APP, DEV = lock("requirements.txt"), lock("requirements-dev.txt")


def test_every_package_is_pinned_to_one_version():
    for req in (*APP.values(), *DEV.values()):
        pinned(req)


def test_the_dev_lock_is_the_app_lock_plus_test_tools():
    for name, req in APP.items():
        assert name in DEV, f"{name} is in requirements.txt but not in requirements-dev.txt"
        assert pinned(DEV[name]) == pinned(req), f"{name}: the two locks differ"
    for tool in project()["optional-dependencies"]["dev"]:
        assert canonicalize_name(Requirement(tool).name) in DEV


@pytest.mark.parametrize("spec", project()["dependencies"])
def test_the_lock_lies_within_pyprojects_ranges(spec):
    req = Requirement(spec)
    name = canonicalize_name(req.name)
    assert name in APP, f"{name} is a dependency but requirements.txt does not lock it"
    assert req.specifier.contains(pinned(APP[name])), f"{APP[name]} is outside pyproject's {spec}"


@pytest.mark.parametrize("name", sorted(DEV))
def test_this_environment_has_the_locked_version(name):
    req = DEV[name]
    if req.marker is not None and not req.marker.evaluate(default_environment()):
        pytest.skip(f"{name} is not installed on this platform ({req.marker})")
    installed = metadata.version(name)
    assert installed == pinned(req), (
        f"{name} {installed} is installed, the lock says {pinned(req)}: pip install -r requirements-dev.txt"
    )
