"""Health: each service's address and what its standard grpc.health.v1 service says."""

from __future__ import annotations

import gradio as gr

from frontend.formatting import health_html
from frontend.gateway import Gateway


def build(gateway: Gateway) -> gr.Blocks:
    with gr.Blocks() as page:
        refresh_button = gr.Button("Check again", scale=0, elem_id="health-refresh")
        table = gr.HTML(elem_id="health-table")

        def check() -> str:
            return health_html(gateway.service_health())

        page.load(check, outputs=table)
        refresh_button.click(check, outputs=table)
    return page
