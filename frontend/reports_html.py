"""Reports from the evaluator, opened in the page and saved for download.

A report is a whole HTML file. It is shown in an iframe whose `srcdoc` holds
the file and whose empty `sandbox` forbids scripts, forms, popups and same-
origin access: the evaluator already escapes all document text and sets a
Content Security Policy, and the sandbox means that even a report that slipped
could run nothing in the UI's origin. No Gradio here.
"""

from __future__ import annotations

import re
from pathlib import Path

from chunklab.render import render
from chunklab.v1 import evaluator_pb2

VIEWS = {
    "managerial": evaluator_pb2.REPORT_VIEW_MANAGERIAL,
    "technical": evaluator_pb2.REPORT_VIEW_TECHNICAL,
    "both": evaluator_pb2.REPORT_VIEW_BOTH,
}


def report_frame_html(report: evaluator_pb2.Report, view: str) -> str:
    return render("frontend", "report_frame.html.j2", view=view, file_name=report.file_name,
                  report_html=report.html)


def safe_file_name(name: str, view: str) -> str:
    """The report's own name, reduced to safe characters, with its view before .html."""
    stem = Path(name or "report").name.removesuffix(".html")
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "report"
    return f"{stem[:80]}-{view}.html"


def save_report(report: evaluator_pb2.Report, view: str, directory: Path) -> Path:
    """Writes the report under directory (a folder per call) for the browser to download."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / safe_file_name(report.file_name, view)
    path.write_text(report.html, encoding="utf-8")
    return path
