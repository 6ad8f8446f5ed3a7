"""Where the tests find the repository, their fixture files and the shared
chroma-general data (which lives beside the repository, not in it)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data" / "chroma-general"


def chroma_general() -> Path:
    """The chroma-general data folder (corpora/*.md and questions.csv). Where it
    is absent the calling test (or fixture) is skipped with a reason that names
    the folder."""
    if not (SHARED_DATA / "corpora").is_dir() or not (SHARED_DATA / "questions.csv").is_file():
        pytest.skip(
            f"needs the chroma-general data at {SHARED_DATA} (corpora/ and questions.csv), which is "
            "absent: put the shared data folder beside the repository to run this test"
        )
    return SHARED_DATA
