"""Compare: chosen experiments side by side, their soft warnings first, and per
metric the difference of every run from the baseline with a 95% interval.

The baseline is the first run of the first experiment chosen (the evaluator's
rule), so the order of the selection matters and the page says which it is.
"""

from __future__ import annotations

import gradio as gr

from frontend import compare_html, experiments_html
from frontend.gateway import Gateway
from frontend.pages.common import shown_as_error, user_error


def build(gateway: Gateway) -> gr.Blocks:
    with gr.Blocks() as page:
        gr.Markdown(
            "Choose two or more experiments; the first one's first run is the baseline. "
            "Each column carries its neighbours badge and embedding model."
        )
        with gr.Row(equal_height=True):
            chosen = gr.Dropdown(label="Experiments", choices=[], multiselect=True, scale=4, elem_id="compare-select")
            refresh = gr.Button("↻", scale=0, min_width=40, elem_id="compare-refresh")
            compare_button = gr.Button("Compare", variant="primary", scale=0, elem_id="compare-button")
        result = gr.HTML(elem_id="compare-result")

        def choices(current: list[str] | None):
            with shown_as_error():
                experiments = gateway.list_experiments()
            options = experiments_html.experiment_choices(experiments)
            ids = {value for _, value in options}
            return gr.update(choices=options, value=[c for c in current or [] if c in ids])

        def compare(experiment_ids: list[str] | None):
            if not experiment_ids or len(experiment_ids) < 2:
                raise user_error("Choose at least two experiments to compare.")
            with shown_as_error():
                response = gateway.compare_experiments(experiment_ids)
            return compare_html.compare_html(response)

        page.load(choices, inputs=chosen, outputs=chosen)
        refresh.click(choices, inputs=chosen, outputs=chosen)
        chosen.focus(choices, inputs=chosen, outputs=chosen, show_progress="hidden")
        compare_button.click(compare, inputs=chosen, outputs=result)
    return page
