"""The key Gradio encrypts what the UI keeps in the browser with (the hand-written draft,
ADR 0150), made once per data folder and kept there (ADR 0156).

Gradio's own default is a new key for each process: after `make up` started the UI again, the
browser still held the draft but the UI could no longer read it. A key kept beside the stack's
databases lasts as long as they do; whoever can read the data folder can read the databases too.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

FILE = "ui-browser-secret"


def kept(data_dir: Path) -> str:
    """The data folder's key, made (readable by its owner only) if it has none. Two UIs that
    start at once on one folder agree: the key is written whole under a temporary name and
    linked into place, and the second link finds the first one's key there."""
    path = data_dir / FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f"{FILE}.{secrets.token_hex(8)}.tmp")
        try:
            with os.fdopen(os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="ascii") as out:
                out.write(secrets.token_urlsafe(32))
            os.link(draft, path)
        except FileExistsError:
            pass  # another UI made the key first: its key is the one
        finally:
            draft.unlink(missing_ok=True)
    return path.read_text(encoding="ascii").strip()
