"""No service imports another service's code; the core package imports no
service; the front end reaches services only through gRPC."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVICES = ("ingest", "chunker", "retriever", "evaluator")


def imported_modules(folder: Path, root: Path = REPO) -> dict[str, set[str]]:
    """Every module imported by each .py file under folder."""
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names |= {f"{node.module}.{alias.name}" for alias in node.names}
        found[str(path.relative_to(root))] = names
    return found


def offending(folder: Path, forbidden: tuple[str, ...], root: Path = REPO) -> list[str]:
    return [
        f"{path} imports {name}"
        for path, names in imported_modules(folder, root).items()
        for name in sorted(names)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]


def test_no_service_imports_another_service():
    problems = []
    for service in SERVICES:
        others = tuple(f"services.{o}" for o in SERVICES if o != service)
        problems += offending(REPO / "services" / service, others)
    assert not problems


def test_the_core_package_and_the_front_end_import_no_service():
    forbidden = ("services",)
    assert not offending(REPO / "chunklab", forbidden)
    assert not offending(REPO / "frontend", forbidden)


def test_the_rule_catches_a_violation(tmp_path):
    """The check itself works: a planted cross-service import is reported."""
    planted = tmp_path / "services" / "chunker"
    planted.mkdir(parents=True)
    (planted / "bad.py").write_text("from services.retriever.index import EdgeIndex\nimport services.ingest\n")
    assert offending(planted, ("services.retriever", "services.ingest"), root=tmp_path) == [
        "services/chunker/bad.py imports services.ingest",
        "services/chunker/bad.py imports services.retriever.index",
        "services/chunker/bad.py imports services.retriever.index.EdgeIndex",
    ]
