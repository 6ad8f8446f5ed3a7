"""Reports the UI fetched, kept on disk and served back to the Reports page's frame.

A report can be tens of megabytes: put in the page (an iframe's srcdoc), it would
travel whole through Gradio's events and the DOM. So the page writes the file as
it streams (ChunkLab.open_report), and the frame loads it from the UI's own route,
`chunklab-reports/<token>/<name>`, which the browser reads as it reads any page,
at any size. The route serves only the files of this store, each in a folder
named by a random token, with a Content-Security-Policy whose `sandbox` forbids
scripts and same-origin access even when the file is opened outside its frame.
The newest KEPT reports stay; older ones are removed as new ones come, and the
whole store when the UI exits (when it made the folder itself). No Gradio
here: the app hands `routes()` to the server it launches.
"""

from __future__ import annotations

import atexit
import re
import secrets
import shutil
import tempfile
import threading
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

ROUTE = "chunklab-reports"
KEPT = 10
HEADERS = {
    "Content-Security-Policy": "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_TOKEN = re.compile(r"[0-9a-f]{32}")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\.html")


class ReportFiles:
    """Report files under one folder (a temporary one by default, made on first use, not when
    the object is built), one folder per report, and the route that serves them."""

    def __init__(self, root: Path | None = None, kept: int = KEPT) -> None:
        self._root = root
        self._kept = kept
        self._lock = threading.Lock()

    @property
    def root(self) -> Path:
        with self._lock:
            if self._root is None:  # a folder of our own, removed when the UI exits
                self._root = Path(tempfile.mkdtemp(prefix="chunklab-ui-reports-"))
                atexit.register(shutil.rmtree, self._root, ignore_errors=True)
            self._root.mkdir(parents=True, exist_ok=True)
            return self._root

    def folder(self) -> tuple[str, Path]:
        """A new, empty folder for one report and its token; the oldest beyond KEPT are removed."""
        token = secrets.token_hex(16)
        folder = self.root / token
        folder.mkdir()
        folders = sorted((p for p in self.root.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime_ns)
        for old in folders[: -self._kept]:
            shutil.rmtree(old, ignore_errors=True)
        return token, folder

    def discard(self, token: str) -> None:
        """Removes a report's folder (a download that failed)."""
        if _TOKEN.fullmatch(token):
            shutil.rmtree(self.root / token, ignore_errors=True)

    @staticmethod
    def url(token: str, name: str) -> str:
        """The file's address relative to the UI's page, as the frame's src."""
        return f"{ROUTE}/{token}/{name}"

    def path(self, token: str, name: str) -> Path | None:
        """The file behind a URL's token and name, or None when there is none (or they are not ours)."""
        if not _TOKEN.fullmatch(token) or not _NAME.fullmatch(name):
            return None
        path = self.root / token / name
        return path if path.is_file() else None

    async def serve(self, request: Request) -> Response:
        path = self.path(request.path_params["token"], request.path_params["name"])
        if path is None:
            return PlainTextResponse("No such report here: open it again from the Reports page.", status_code=404)
        return FileResponse(path, media_type="text/html; charset=utf-8", headers=HEADERS)

    def routes(self) -> list[Route]:
        return [Route(f"/{ROUTE}/{{token}}/{{name}}", self.serve, methods=["GET", "HEAD"])]


# The app's store: building it does no I/O; its folder is made when the first report is opened.
FILES = ReportFiles()
