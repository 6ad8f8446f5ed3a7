"""No service imports another service's code; the core package `chunklab`
is a library that imports no service, no front end and no application; the
front end and the applications (`chunklab_app`: the CLI and the stack
launcher) reach the services only through gRPC, i.e. through the client
library, and the services import neither of them (ADR 0042)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
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


def test_the_core_package_imports_no_service_no_front_end_and_no_application():
    assert not offending(REPO / "chunklab", ("services", "frontend", "chunklab_app"))


# What the UI shares with the command line: the recommended configuration, the export
# shapes and the shipped samples (app-level code, ADR 0076). The rest of chunklab_app
# (the command line, the launcher, the sample loader, the benchmarks page) is not the UI's.
SHARED_WITH_THE_UI = ("chunklab_app.recommended", "chunklab_app.export", "chunklab_app.samples")


def test_the_front_end_and_the_applications_import_no_service():
    """Both call the services through chunklab.client; the launcher starts them as processes."""
    assert not offending(REPO / "frontend", ("services",))
    assert not offending(REPO / "chunklab_app", ("services",))


def test_the_front_end_imports_only_the_app_code_it_shares_with_the_command_line():
    problems = [
        problem
        for problem in offending(REPO / "frontend", ("chunklab_app",))
        if not any(
            problem.endswith(f" imports {name}") or f" imports {name}." in problem
            for name in (*SHARED_WITH_THE_UI, "chunklab_app")
        )
    ]
    assert not problems


def test_the_services_import_no_front_end_and_no_application():
    assert not offending(REPO / "services", ("frontend", "chunklab_app"))


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


def test_the_application_package_is_not_taken_for_the_core_package(tmp_path):
    """`chunklab_app` is forbidden to the core by its own name: `chunklab.x` does not match it."""
    planted = tmp_path / "chunklab"
    planted.mkdir()
    (planted / "bad.py").write_text("import chunklab_app.cli\nfrom chunklab.settings import Settings\n")
    assert offending(planted, ("chunklab_app", "frontend"), root=tmp_path) == [
        "chunklab/bad.py imports chunklab_app.cli"
    ]
