"""docs/adr/README.md lists every decision, and every decision says whether it
still holds (a Status line under its title).

An ADR states one decision. A changed decision is a new ADR whose Status line
names the one it supersedes or amends, and the older ADR's Status line names it
back; nothing is added to an ADR in place (no "Later"/"Update" sections, no
session diary)."""

from __future__ import annotations

import re
from pathlib import Path

ADR = Path(__file__).resolve().parents[2] / "docs" / "adr"

# The state an ADR is in: the first words of its Status line.
STATES = re.compile(r"Status: (Accepted\.|Superseded by (ADR )?\d{4}\b)")
# How a Status line relates an ADR to others. "… by" points to a later ADR, the rest to an earlier one.
RELATION = re.compile(
    r"\b(superseded in part by|superseded by|amended by|extended by|supersedes|amends|extends)\b|\b(\d{4})\b",
    re.IGNORECASE,
)
SECTIONS = ["Context", "Decision", "Consequences"]
# Marks of a decision added to in place, or of a session's diary.
DIARY = [
    re.compile(r"\b(added|updated|amended|extended|changed) in place\b", re.IGNORECASE),
    re.compile(
        r"\b(this|that|the same|a later|an earlier|second|third|fourth|next|previous) session\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bend of the session\b", re.IGNORECASE),
    re.compile(r"^\W*(Later|Update|Addendum)\b[ (,:]", re.MULTILINE),
    re.compile(r"\bstale since\b", re.IGNORECASE),
]
DIARY_HEADING = re.compile(r"later|update|addendum|amend|session|\d{4}-\d{2}-\d{2}", re.IGNORECASE)


def adr_files() -> list[Path]:
    return sorted(ADR.glob("[0-9][0-9][0-9][0-9]-*.md"))


def status_of(text: str) -> str | None:
    """The Status paragraph between the title and the first section, joined into one line."""
    head = text.split("\n## ", 1)[0]
    match = re.search(r"^Status: .*?(?=\n\s*\n|\Z)", head, re.MULTILINE | re.DOTALL)
    return " ".join(match.group(0).split()) if match else None


def missing_status(path: Path) -> bool:
    """True when no `Status:` line comes between the title and the first section."""
    return status_of(path.read_text(encoding="utf-8")) is None


def relations(number: str, status: str) -> list[tuple[str, str]]:
    """(relation, other ADR) for every ADR number the Status line names; relation "" when none precedes it."""
    found, current = [], ""
    for match in RELATION.finditer(status):
        if match.group(1):
            current = match.group(1).lower()
        elif match.group(2) != number:
            found.append((current, match.group(2)))
    return found


def statuses() -> dict[str, str]:
    return {p.name[:4]: status_of(p.read_text(encoding="utf-8")) or "" for p in adr_files()}


def test_every_adr_has_a_status_line_under_its_title():
    assert adr_files(), f"no ADRs found in {ADR}"
    assert [p.name for p in adr_files() if missing_status(p)] == []


def test_every_status_starts_with_an_allowed_state():
    wrong = {n: s[:80] for n, s in statuses().items() if not STATES.match(s)}
    assert wrong == {}, 'a Status line starts "Status: Accepted." or "Status: Superseded by NNNN"'


def test_status_lines_name_existing_adrs_in_the_right_direction():
    """`… by NNNN` names a later ADR, `Amends/Extends/Supersedes NNNN` an earlier one, and every
    number follows one of those words."""
    known = statuses()
    problems = []
    for number, status in known.items():
        for relation, other in relations(number, status):
            if other not in known:
                problems.append(f"{number} names {other}, which does not exist")
            elif not relation:
                problems.append(f"{number} names {other} without saying how they relate")
            elif relation.endswith(" by") != (other > number):
                problems.append(f"{number}: '{relation} {other}' points the wrong way")
    assert problems == []


def test_both_status_lines_of_a_relation_name_each_other():
    known = statuses()
    one_sided = [
        f"{number} names {other} but {other} does not name {number}"
        for number, status in known.items()
        for _, other in relations(number, status)
        if other in known and number not in {o for _, o in relations(other, known[other])}
    ]
    assert one_sided == []


def test_a_superseded_adr_names_a_successor_that_says_it_supersedes_it():
    known = statuses()
    problems = []
    for number, status in known.items():
        for relation, other in relations(number, status):
            successor = relations(other, known[other]) if other in known else []
            if relation.startswith("superseded") and ("supersedes", number) not in successor:
                problems.append(f"{number} is superseded by {other}, whose Status does not say so")
            if relation == "superseded by" and not STATES.match(status).group(1).startswith("Superseded"):
                problems.append(f"{number} is Accepted, so a part of it is 'superseded in part by {other}'")
    assert problems == []


def test_every_adr_has_context_decision_and_consequences_once_in_that_order():
    wrong = {}
    for path in adr_files():
        headings = re.findall(r"^## (.+?)\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
        core = [h for h in headings if h in SECTIONS]
        if core != SECTIONS:
            wrong[path.name] = headings
    assert wrong == {}


def test_no_adr_is_added_to_in_place_or_reads_as_a_diary():
    found = {}
    for path in adr_files():
        text = path.read_text(encoding="utf-8")
        hits = [m.group(0) for rule in DIARY for m in rule.finditer(text)]
        hits += [h for h in re.findall(r"^## (.+)$", text, re.MULTILINE) if DIARY_HEADING.search(h)]
        if hits:
            found[path.name] = hits
    assert found == {}, "a changed decision is a new ADR that supersedes or amends the old one"


def index_rows() -> list[tuple[str, str, str]]:
    """(number, file name, status column) of every row of docs/adr/README.md's index."""
    index = (ADR / "README.md").read_text(encoding="utf-8")
    return re.findall(
        r"^\| \[(\d{4})\]\((\d{4}-[^)]+\.md)\) \| [^|]+ \| ([^|]+) \|",
        index,
        re.MULTILINE,
    )


def test_the_index_links_every_adr_once_by_its_number():
    rows = index_rows()
    assert all(number == name[:4] for number, name, _ in rows), rows
    assert sorted(name for _, name, _ in rows) == [p.name for p in adr_files()], (
        "docs/adr/README.md must have one row `| [NNNN](NNNN-….md) | title | status | line |` per ADR file"
    )


def test_the_index_gives_each_adr_its_own_state():
    known = statuses()
    wrong = {}
    for number, _, column in index_rows():
        state = STATES.match(known.get(number, ""))
        expected = "Superseded" if state and state.group(1).startswith("Superseded") else "Accepted"
        if not column.strip().startswith(expected):
            wrong[number] = column.strip()
    assert wrong == {}, "an index row's status starts with the ADR's state (Accepted or Superseded)"


def test_the_checks_themselves_work(tmp_path):
    """A Status line below the first section does not count; relations, states and diary marks are read."""
    good, late = tmp_path / "0001-good.md", tmp_path / "0002-late.md"
    good.write_text("# ADR 0001: Good\n\nStatus: Accepted.\n\n## Context\nText.\n")
    late.write_text("# ADR 0002: Late\n\n## Context\nText.\n\nStatus: Accepted.\n")
    assert (missing_status(good), missing_status(late)) == (False, True)
    status = status_of(
        "# ADR 0009\n\nStatus: Accepted. Amends 0003 and\n0004 (x). Superseded in part by 0012.\n\n## Context\n"
    )
    assert relations("0009", status) == [
        ("amends", "0003"),
        ("amends", "0004"),
        ("superseded in part by", "0012"),
    ]
    states = [
        "Status: Accepted.",
        "Status: Superseded by 0012 (x).",
        "Status: Accepted (updated in place).",
        "Status: Amended, partly superseded.",
    ]
    assert [bool(STATES.match(s)) for s in states] == [True, True, False, False]
    diary = "## Later (this ADR's second session)\nLater, the probe became a comparison (added in place).\n"
    assert sum(len(list(rule.finditer(diary))) for rule in DIARY) >= 3
    assert DIARY_HEADING.search("Third session: each thread owns its encoding")
