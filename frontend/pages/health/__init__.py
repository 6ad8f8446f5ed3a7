"""Health: each service's address and what its standard grpc.health.v1 service
says, then what the chunker offers and what the retriever's index holds."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab, ClientError
from frontend.errors import told_html
from frontend.views.formatting import catalog_html, health_html, index_stats_html


def build(gateway: ChunkLab, opened=None) -> gr.Blocks:
    """`opened`: the event of the tab being opened (frontend/app.py), when the page reads the
    stack (ADR 0165); without one, when the page loads."""
    with gr.Blocks() as page:
        refresh_button = gr.Button("Check again", scale=0, elem_id="health-refresh")
        table = gr.HTML(elem_id="health-table")
        details = gr.HTML(elem_id="health-details")

        def check() -> tuple[str, str]:
            parts = []
            # Each detail on its own: one service down must not hide what the others say.
            for call, draw in ((gateway.strategy_catalog, catalog_html), (gateway.index_stats, index_stats_html)):
                try:
                    parts.append(draw(call()))
                except ClientError as exc:
                    parts.append(told_html(exc))
            return health_html(gateway.service_health()), "".join(parts)

        (opened or page.load)(check, outputs=[table, details])
        refresh_button.click(check, outputs=[table, details])
    return page
