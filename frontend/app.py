"""Composes the pages into one Gradio app and serves it.

Thin on purpose: each page builds its own gr.Blocks from a ChunkLab; this
module only places them in tabs, adds the route the Reports page's frame loads
reports from, picks the port, asks for a login when the stack has a token
(ADR 0048) and tells the stack launcher where the UI listens
(`chunklab ui listening on http://HOST:PORT`, https with TLS).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import routes

from chunklab.client import ChunkLab
from chunklab.rpc import security, tracing
from chunklab.settings import Settings, load_settings
from frontend import browser_secret
from frontend.pages import compare, documents, experiments, freshness, health, query, questions, reports, start, tune
from frontend.report_files import FILES
from frontend.style import CSS

LOGIN_MESSAGE = (
    "This ChunkLab stack is protected by a token. Sign in with any user name and the stack's token "
    "(CHUNKLAB_AUTH_TOKEN) as the password."
)

START = "start"
PAGES = (
    ("Documents", "documents", documents),
    ("Query", "query", query),
    ("Question sets", "questions", questions),
    ("Find the best configuration", "tune", tune),
    ("Experiments", "experiments", experiments),
    ("Compare", "compare", compare),
    ("Reports", "reports", reports),
    ("Freshness", "freshness", freshness),
    ("Health", "health", health),
)

# The pages that read the stack when their tab is opened, not while the page loads behind Start
# here (ADR 0093, 0165): each is current when looked at, and a page load runs 8 handlers instead
# of 21. Documents and Query load with the page: the first steps open them, Query with the
# sample's first question already answered.
LOOK_AGAIN_WHEN_OPENED = (compare, reports, questions, experiments, tune, freshness, health)


# Gradio rebuilds a pandas summary of every event it has run (up to 10,000) after each event, for
# the monitoring dashboard this app turns off (enable_monitoring=False): about 30 ms of the UI's
# time per event once 150 handlers have run (ADR 0163). Read when a Blocks is made: events between two
# summaries, never reached.
EVENTS_PER_SUMMARY = str(2**62)


@contextlib.contextmanager
def without_interim_servers() -> Iterator[None]:
    """Gradio 6.31 makes a whole FastAPI app (about 80 routes, with their pydantic models) for
    each Blocks when it is made and again when its `with` ends; launch() makes the one that
    serves and drops them. The UI's eleven Blocks (the app and a page per tab) made 22 of them:
    1.1-1.7 s of the 2.3-2.5 s of CPU build_app took (ADR 0164). None is made while this is open."""
    made = routes.App.create_app
    routes.App.create_app = staticmethod(lambda *args, **kwargs: None)
    try:
        yield
    finally:
        routes.App.create_app = made


def build_app(gateway: ChunkLab, secret: str | None = None) -> gr.Blocks:
    """`secret`: the key of what the browser keeps (frontend/browser_secret.py; None: Gradio
    makes one for this process)."""
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", EVENTS_PER_SUMMARY)
    # Each page is built inside its tab: a Blocks created inside another one
    # renders itself there at once (so no .render()), and, what matters more,
    # its gr.render blocks are numbered in the app's own list. A page built
    # apart numbers its renders from 0 and, once placed, a re-render of one
    # page's form would make the browser drop another page's event handlers.
    # Uploaded files older than a day are deleted, checked hourly: they were copied to ingest.
    with (
        without_interim_servers(),
        gr.Blocks(title="ChunkLab", analytics_enabled=False, delete_cache=(3600, 86400)) as app,
    ):
        gr.Markdown("## ChunkLab: compare chunking strategies for RAG", elem_id="app-title")
        # Experiment ids a page asks Compare to show (the study page's "Open in Compare"). Made
        # outside the tabs: a component among them counts as one, and the tab bar repeats a tab.
        compare_request = gr.State(None)
        # Start here comes first: its steps open the other tabs (ADR 0091).
        with gr.Tabs(selected=START) as tabs:
            with gr.Tab("Start here", id=START, elem_id=f"tab-{START}") as start_tab:
                start.build(gateway, tabs, start_tab)
            for title, tab_id, module in PAGES:
                with gr.Tab(title, id=tab_id, elem_id=f"tab-{tab_id}") as tab:
                    options: dict[str, Any] = {"opened": tab.select} if module in LOOK_AGAIN_WHEN_OPENED else {}
                    if module is compare:
                        options.update(request=compare_request)
                    elif module is tune:
                        options.update(compare_request=compare_request, tabs=tabs)
                    elif module is questions:
                        options.update(secret=secret)
                    module.build(gateway, **options)
    return app


def free_port(host: str) -> int:
    """A port the OS says is free now (Gradio cannot bind port 0 and report the real one)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def display_host(host: str) -> str:
    """A host a browser can open: a wildcard bind is reachable on loopback."""
    if host in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def token_login(token: str) -> Callable[[str, str], bool]:
    """Gradio's login check: any user name, the stack's token as the password.
    The name only labels the session; the token is the one secret (ADR 0048)."""
    return lambda _user, password: security.token_matches(password, token)


def protection(settings: Settings) -> dict[str, Any]:
    """launch()'s options for the settings' token (a login) and TLS (https with
    the services' certificate); none when both are off."""
    options: dict[str, Any] = {}
    if settings.auth_token:
        options.update(auth=token_login(settings.auth_token), auth_message=LOGIN_MESSAGE)
    if settings.tls_cert:
        # ssl_verify only governs Gradio's request to itself at start, which
        # would not trust a private CA.
        options.update(ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key, ssl_verify=False)
    return options


UPLOADS = "ui-uploads"


def keep_uploads_in_data_folder(settings: Settings) -> Path:
    """Where Gradio writes what the browser uploads (and its cache): a folder of the
    stack's data folder, not the system's temp folder. Gradio reads the place from
    GRADIO_TEMP_DIR when the app is built and launched, so this comes first."""
    folder = (settings.data_dir / UPLOADS).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["GRADIO_TEMP_DIR"] = str(folder)
    return folder


def upload_limit(settings: Settings) -> int:
    """The largest file the UI accepts, in bytes: the stack's upload cap, which
    ingest applies too (a bigger file gets 413 before it is written)."""
    return int(settings.max_upload_mb * 1024 * 1024)


def launch(app: gr.Blocks, host: str, port: int, attempts: int = 5, settings: Settings | None = None) -> int:
    """Starts the server without blocking; with port 0, retries if another process wins the free port.
    The settings' token and TLS files protect it (none given: open, plain HTTP), and their
    upload cap bounds what the browser may upload."""
    options = {**protection(settings), "max_file_size": upload_limit(settings)} if settings is not None else {}
    for attempt in range(1, attempts + 1):
        chosen = port or free_port(host)
        try:
            app.launch(
                server_name=host,
                server_port=chosen,
                prevent_thread_lock=True,
                quiet=True,
                show_error=True,
                ssr_mode=False,
                mcp_server=False,
                enable_monitoring=False,
                footer_links=[],
                css=CSS,
                # The Reports page's frame loads reports from here, at any size.
                app_kwargs={"routes": FILES.routes()},
                **options,
            )
        except OSError:
            if port or attempt == attempts:
                raise
            continue
        return app.server_port or chosen
    raise OSError(f"no free port on {host} after {attempts} attempts")


def main() -> None:
    settings = load_settings()
    tracing.start("ui", settings)  # the UI's calls begin their traces
    keep_uploads_in_data_folder(settings)
    app = build_app(ChunkLab(settings), secret=browser_secret.kept(settings.data_dir))
    if warning := security.exposure_warning("ui", settings.ui_host, settings):
        print(warning, file=sys.stderr, flush=True)
    try:
        port = launch(app, settings.ui_host, settings.ui_port, settings=settings)
    except OSError as exc:
        raise SystemExit(f"chunklab ui: cannot listen on {settings.ui_host}:{settings.ui_port}: {exc}") from None
    scheme = "https" if settings.tls_cert else "http"
    print(f"chunklab ui listening on {scheme}://{display_host(settings.ui_host)}:{port}", flush=True)
    # The stack stops its children with SIGTERM: close the server as Ctrl-C would.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    app.block_thread()
