"""What the HTTP servers tests start themselves share: a quiet handler that sends
bodies, and a server on 127.0.0.1 port 0 in a daemon thread, used as a context manager."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _raw(self, status: int, data: bytes, content_type: str, send: bytes | None = None) -> None:
        """Announces `data`; sends `send` instead when given (a reply cut short)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data if send is None else send)


class LocalServer:
    _server: ThreadingHTTPServer | None = None

    def start(self):
        raise NotImplementedError

    def _listen(self, handler: type[BaseHTTPRequestHandler]):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
