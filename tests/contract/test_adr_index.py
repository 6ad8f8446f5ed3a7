"""docs/adr/README.md lists every decision, and every decision says whether it
still holds (a Status line under its title)."""

from __future__ import annotations

import re
from pathlib import Path

ADR = Path(__file__).resolve().parents[2] / "docs" / "adr"


def adr_files() -> list[Path]:
    return sorted(ADR.glob("[0-9][0-9][0-9][0-9]-*.md"))


def missing_status(path: Path) -> bool:
    """True when no `Status:` line comes between the title and the first section."""
    head = path.read_text(encoding="utf-8").split("\n## ", 1)[0]
    return not re.search(r"^Status: \S", head, re.M)


def test_every_adr_has_a_status_line_under_its_title():
    assert adr_files(), f"no ADRs found in {ADR}"
    assert [p.name for p in adr_files() if missing_status(p)] == []


def test_the_index_links_every_adr_once_by_its_number():
    index = (ADR / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(\d{4})\]\((\d{4}-[^)]+\.md)\) \|", index, re.M)
    assert all(number == name[:4] for number, name in rows), rows
    assert sorted(name for _, name in rows) == [p.name for p in adr_files()], (
        "docs/adr/README.md must have one row `| [NNNN](NNNN-….md) | title | status | line |` per ADR file"
    )


def test_a_status_line_in_the_wrong_place_is_caught(tmp_path):
    """The check itself works: a Status line below the first section does not count."""
    good, late = tmp_path / "0001-good.md", tmp_path / "0002-late.md"
    good.write_text("# ADR 0001: Good\n\nStatus: Accepted.\n\n## Context\nText.\n")
    late.write_text("# ADR 0002: Late\n\n## Context\nText.\n\nStatus: Accepted.\n")
    assert (missing_status(good), missing_status(late)) == (False, True)
