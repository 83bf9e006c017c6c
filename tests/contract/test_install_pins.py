"""Everything installs from the project's own files, the same way on every machine.

A requirement that points at a path, a URL or a local wheel (``name @ file:///tmp/...``) installs only on
the machine that wrote it; a range lets a fresh machine pick another release (or a multi-GB CUDA torch).
So every requirement and constraint line is ``name==version``, and the pins in pyproject.toml and the
requirement files agree with constraints.txt.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[2]
PIN_FILES = sorted([ROOT / "constraints.txt", *(ROOT / "requirements").glob("*.txt")])
NAME_EQ_VERSION = re.compile(r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==(?P<version>[^\s;@,<>=!~]+)$")


def pin_problem(line: str) -> str | None:
    """Why ``line`` is not an exact ``name==version`` pin (None: it is one)."""
    m = NAME_EQ_VERSION.match(line)
    if not m:
        return "not of the form name==version (no paths, URLs, 'name @ ...', ranges, markers, extras or options)"
    try:
        Version(m["version"])
    except InvalidVersion:
        return f"{m['version']!r} is not a version"
    return None


def pinned_lines(path: Path) -> list[tuple[int, str]]:
    out = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            out.append((n, line))
    return out


def exact_pins(lines) -> dict[str, Version]:
    return {canonicalize_name(m["name"]): Version(m["version"]) for _, line in lines if (m := NAME_EQ_VERSION.match(line))}


def pyproject_requirements() -> list[tuple[str, str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    out = [("build-system.requires", r) for r in data["build-system"]["requires"]]
    out += [("project.dependencies", r) for r in data["project"]["dependencies"]]
    for extra, reqs in data["project"].get("optional-dependencies", {}).items():
        out += [(f"project.optional-dependencies.{extra}", r) for r in reqs]
    return out


@pytest.mark.parametrize("path", PIN_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_requirement_and_constraint_line_is_an_exact_pin(path):
    bad = [f"{path.relative_to(ROOT)}:{n}: {line!r}: {why}" for n, line in pinned_lines(path) if (why := pin_problem(line))]
    assert not bad, "\n".join(bad)


def test_pyproject_requirements_are_exact_pins():
    bad = []
    for where, req in pyproject_requirements():
        try:
            r = Requirement(req)
        except InvalidRequirement as e:
            bad.append(f"{where}: {req!r}: {e}")
            continue
        spec = list(r.specifier)
        if r.url or r.marker or len(spec) != 1 or spec[0].operator != "==" or "*" in spec[0].version:
            bad.append(f"{where}: {req!r} is not name==version")
    assert not bad, "\n".join(bad)


def test_every_pin_agrees_with_the_constraints():
    """A requirement pinned at one version and constrained at another cannot install; compare public
    versions (torch==2.13.0 is constrained as the CPU build 2.13.0+cpu)."""
    constraints = exact_pins(pinned_lines(ROOT / "constraints.txt"))
    # llm.txt is the local chat model's own environment (.llm/venv, `make llm`), never installed beside the project's
    asked = [(f"{p.relative_to(ROOT)}", line) for p in PIN_FILES if p.name not in ("constraints.txt", "bootstrap.txt", "llm.txt")
             for _, line in pinned_lines(p)]
    asked += [("pyproject.toml", r) for where, r in pyproject_requirements() if not where.startswith("build-system")]
    bad = []
    for where, line in asked:
        req = Requirement(line)
        name, version = canonicalize_name(req.name), Version(next(iter(req.specifier)).version)
        if name not in constraints:
            bad.append(f"{where}: {line} has no pin in constraints.txt")
        elif constraints[name].public != version.public:
            bad.append(f"{where}: {line} but constraints.txt pins {constraints[name]}")
    assert not bad, "\n".join(bad)


def test_bootstrap_matches_the_build_backend_pin():
    build = {canonicalize_name(Requirement(r).name): r for w, r in pyproject_requirements() if w == "build-system.requires"}
    boot = {canonicalize_name(m["name"]): line for _, line in pinned_lines(ROOT / "requirements/bootstrap.txt")
            if (m := NAME_EQ_VERSION.match(line))}
    assert build["setuptools"] == boot["setuptools"]


@pytest.mark.parametrize("line", [
    "hypothesis @ file:///tmp/hyp/hypothesis-6.170.17-cp311-cp311-manylinux2014_x86_64.whl#sha256=ba57",
    "/tmp/wheels/foo-1.0-py3-none-any.whl", "https://example.org/foo-1.0.tar.gz", "-e .", "--find-links /tmp/wheels",
    "foo>=1.0", "foo~=1.0", "foo==1.*", "foo", "foo==1.0; python_version<'3.12'", "foo[bar]==1.0", "foo==1.0 --hash=sha256:ab",
    "git+https://github.com/x/foo.git",
])
def test_the_check_refuses_what_installs_only_somewhere(line):
    assert pin_problem(line) is not None


@pytest.mark.parametrize("line", ["hypothesis==6.170.17", "torch==2.13.0+cpu", "PyYAML==6.0.4", "ruamel.yaml==0.19.1",
                                  "certifi==2026.10.19.post1", "opentelemetry-semantic-conventions==0.66b2"])
def test_the_check_accepts_exact_pins(line):
    assert pin_problem(line) is None
