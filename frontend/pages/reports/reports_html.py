"""Reports from the evaluator, opened in the page and saved for download.

A report is a whole HTML file, written to disk as it streams and loaded by an
iframe from the UI's own route (frontend.report_files), so that it opens at any
size. The frame's empty `sandbox` forbids scripts, forms, popups and same-
origin access: the evaluator already escapes all document text and sets a
Content Security Policy, the route adds a sandboxing one, and the sandbox means
that even a report that slipped could run nothing in the UI's origin. No Gradio
here.
"""

from __future__ import annotations

import re
from pathlib import Path

from chunklab.client import SavedReport
from chunklab.v1 import evaluator_pb2
from chunklab.views.render import render
from frontend.views.formatting import size_label

VIEWS = {
    "managerial": evaluator_pb2.REPORT_VIEW_MANAGERIAL,
    "technical": evaluator_pb2.REPORT_VIEW_TECHNICAL,
    "both": evaluator_pb2.REPORT_VIEW_BOTH,
}


def report_frame_html(saved: SavedReport, view: str, url: str) -> str:
    """The frame that loads the saved report from url, with its name and size above it."""
    return render(
        "frontend",
        "report_frame.html.j2",
        view=view,
        file_name=saved.path.name,
        url=url,
        size=size_label(saved.size_bytes),
    )


def safe_file_name(name: str, view: str) -> str:
    """The report's own name, reduced to safe characters, with its view before .html."""
    stem = Path(name or "report").name.removesuffix(".html")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "report"
    return f"{stem[:80]}-{view}.html"
