"""Query: ask a question of one strategy and see both shapes of the answer's context.

Left, `retrieved_chunks` as the LLM sees them (document order, labelled);
right, the `expansion_tree` as the operator reads it (hits in score order,
each with the neighbours it pulled in).
"""

from __future__ import annotations

import gradio as gr

from chunklab.v1 import common_pb2, retriever_pb2
from frontend import knobs, retrieval_html
from frontend.gateway import Gateway, GatewayError
from frontend.formatting import message_html
from frontend.pages.common import document_dropdown_update, shown_as_error, user_error


def retrieve_request(
    question: str, strategy: str, document_ids: list[str] | None,
    top_k: float | None, neighbor_prev: float | None, neighbor_next: float | None,
) -> retriever_pb2.RetrieveRequest:
    """The Retrieve request for the form's values; empty number fields take the spec's defaults."""
    return retriever_pb2.RetrieveRequest(
        query=question.strip(),
        strategy=strategy,
        top_k=5 if top_k is None else int(top_k),
        neighbor_prev=0 if neighbor_prev is None else int(neighbor_prev),
        neighbor_next=0 if neighbor_next is None else int(neighbor_next),
        filter=common_pb2.RetrievalFilter(document_ids=document_ids or []),
    )


def default_strategy(names: list[str], current: str | None) -> str | None:
    """Keeps the user's choice; otherwise the baseline, fixed_size, where it exists."""
    if current in names:
        return current
    if knobs.BASELINE in names:
        return knobs.BASELINE
    return names[0] if names else None


def build(gateway: Gateway) -> gr.Blocks:
    with gr.Blocks() as page:
        with gr.Row(equal_height=True):
            question = gr.Textbox(
                label="Question", placeholder="What does the document say about …?", scale=4, elem_id="query-text"
            )
            ask_button = gr.Button("Retrieve", variant="primary", scale=0, elem_id="retrieve-button")
        with gr.Row():
            strategy = gr.Dropdown(label="Strategy", choices=[], elem_id="query-strategy")
            documents = gr.Dropdown(
                label="Documents (empty = all)", choices=[], multiselect=True, elem_id="query-documents"
            )
            refresh_button = gr.Button("↻", scale=0, min_width=40, elem_id="query-refresh")
        with gr.Row():
            top_k = gr.Number(label="top_k", value=5, precision=0, minimum=1, maximum=100, elem_id="query-top-k")
            neighbor_prev = gr.Number(
                label="neighbor_prev", value=0, precision=0, minimum=0, maximum=10,
                info="fixed_size only", elem_id="query-neighbor-prev",
            )
            neighbor_next = gr.Number(
                label="neighbor_next", value=0, precision=0, minimum=0, maximum=10,
                info="fixed_size only", elem_id="query-neighbor-next",
            )
        summary = gr.HTML(elem_id="retrieve-summary")
        with gr.Row():
            with gr.Column():
                gr.Markdown("#### retrieved_chunks: what the LLM sees, in document order")
                flat = gr.HTML(elem_id="flat-list")
            with gr.Column():
                gr.Markdown("#### expansion_tree: hits in score order with their neighbours")
                tree = gr.HTML(elem_id="expansion-tree")

        def options(current_strategy: str | None, current_documents: list[str] | None):
            try:
                names = [info.name for info in gateway.list_strategies()]
                strategy_update = gr.update(choices=names, value=default_strategy(names, current_strategy))
                message = ""
            except GatewayError as exc:
                strategy_update, message = gr.update(), message_html(exc.message, "error")
            with shown_as_error():
                documents_update = document_dropdown_update(gateway, current_documents or [])
            return strategy_update, documents_update, message

        def ask(question_text, strategy_name, document_ids, k, prev, nxt):
            if not (question_text or "").strip():
                raise user_error("Type a question first.")
            if not strategy_name:
                raise user_error("Choose a strategy (none is loaded: see the Health tab).")
            request = retrieve_request(question_text, strategy_name, document_ids, k, prev, nxt)
            with shown_as_error():
                response = gateway.retrieve(request)
            return (
                retrieval_html.retrieval_summary_html(response),
                retrieval_html.flat_list_html(response),
                retrieval_html.expansion_tree_html(response),
            )

        ask_inputs = [question, strategy, documents, top_k, neighbor_prev, neighbor_next]
        page.load(options, inputs=[strategy, documents], outputs=[strategy, documents, summary])
        refresh_button.click(options, inputs=[strategy, documents], outputs=[strategy, documents, summary])
        def current_documents(selection: list[str] | None):
            with shown_as_error():
                return document_dropdown_update(gateway, selection or [])

        # Documents uploaded on the other tab since this page loaded show up on opening the list.
        documents.focus(current_documents, inputs=documents, outputs=documents, show_progress="hidden")
        ask_button.click(ask, inputs=ask_inputs, outputs=[summary, flat, tree])
        question.submit(ask, inputs=ask_inputs, outputs=[summary, flat, tree])
    return page
