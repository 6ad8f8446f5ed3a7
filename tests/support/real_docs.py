"""The dev set of real documents (../shared/data/real-docs/, beside the
repository, not in it: their licences are theirs)."""

from __future__ import annotations

import pytest

from tests.support.repo import REPO

REAL_DOCS = REPO.parent / "shared" / "data" / "real-docs"


def real_doc(relative: str) -> bytes:
    """The bytes of a dev-set file (e.g. "pdf/multi_page.pdf"); where the dev set is
    absent the calling test is skipped with a reason that names the folder."""
    path = REAL_DOCS / relative
    if not path.is_file():
        pytest.skip(
            f"needs the real-docs dev set at {REAL_DOCS} ({relative} is absent): put the shared data beside the repository"
        )
    return path.read_bytes()
