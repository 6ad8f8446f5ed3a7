"""Taking a configuration home from the UI (ADR 0060): the Documents page's
Export button for the chosen index set, and the Experiments page's code box
with the winner's settings. The shapes and the code come from chunklab_app/export.py."""

from __future__ import annotations

import gradio as gr

from chunklab.client import ChunkLab
from chunklab_app import export
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.report_files import ReportFiles
from frontend.views.formatting import message_html

FORMAT_CHOICES = [
    ("ChunkLab JSONL", "jsonl"),
    ("LangChain Documents", "langchain"),
    ("LlamaIndex TextNodes", "llamaindex"),
]
CODE_TABS = (("ChunkLab", "chunklab"), ("LangChain", "langchain"), ("LlamaIndex", "llamaindex"))
# Exported files, one folder each, the oldest removed as new ones come (as reports are kept).
EXPORTS = ReportFiles()


def export_chunks(gateway: ChunkLab, document_id: str | None, chosen: str | None, fmt: str) -> str:
    """Writes the chosen index set ("strategy/config_id") of the document as a file; returns its path."""
    if not document_id or not chosen:
        raise user_error("Select a document and one of its index sets to export.")
    strategy, _, config_id = chosen.partition("/")
    _, folder = EXPORTS.folder()
    with told_as_sentence():
        try:
            path, _ = export.write_export(gateway, document_id, strategy, fmt, folder, config_id=config_id)
        except export.ExportError as exc:
            raise user_error(str(exc)) from None
    return str(path)


def set_export_section(gateway: ChunkLab, selected: gr.Dropdown, chosen_set: gr.Dropdown) -> None:
    """Below the index-set actions: a format, the Export button and the file to download."""
    with gr.Row(equal_height=True):
        fmt = gr.Radio(choices=FORMAT_CHOICES, value="jsonl", label="Export format", scale=3, elem_id="export-format")
        button = gr.Button("Export chunks", scale=0, elem_id="set-export")
    status = gr.HTML(elem_id="export-status")
    download = gr.File(label="Exported chunks (one JSON object a line)", interactive=False, elem_id="export-file")

    @said_in_place(outputs=2)
    def exported(document_id: str | None, chosen: str | None, name: str):
        """The file, or why there is none as one sentence above it (no "Error" pill on the box)."""
        return "", export_chunks(gateway, document_id, chosen, name)

    button.click(exported, inputs=[selected, chosen_set, fmt], outputs=[status, download])


def winner_code(gateway: ChunkLab, experiment_id: str | None) -> tuple[str, str, str, str]:
    """(a sentence, the ChunkLab, LangChain and LlamaIndex code) of the experiment's winner."""
    if not experiment_id:
        return "", "", "", ""
    with told_as_sentence():
        experiment = gateway.get_experiment(experiment_id, without_results=True)
    try:
        run = export.winner_run(experiment)
    except export.ExportError as exc:
        return message_html(str(exc), "info"), "", "", ""
    code = export.snippets(run.spec, run.config_id, run.retrieval)
    note = message_html(
        f"{run.run_key} won: its configuration (knobs and retrieval settings) as code to paste; "
        "LangChain and LlamaIndex get their nearest splitter, or a comment where there is none.",
        "ok",
    )
    return note, code["chunklab"], code["langchain"], code["llamaindex"]


def winner_section(gateway: ChunkLab, experiment: gr.Dropdown) -> None:
    """On the experiment detail: copy the winner's settings, one tab per library."""
    # Offered only when the experiment has one winner (ADR 0080): on a shared lead the verdict names the leaders.
    with gr.Accordion("Copy the winner's settings", open=False, elem_id="winner-code", visible=False) as box:
        note = gr.HTML(elem_id="winner-code-note")
        boxes = []
        with gr.Tabs():
            for label, library in CODE_TABS:
                with gr.Tab(label):
                    boxes.append(
                        gr.Code(
                            language="python",
                            interactive=False,
                            label=f"{label} code",
                            elem_id=f"winner-code-{library}",
                        )
                    )

    def shown(experiment_id: str | None):
        code = winner_code(gateway, experiment_id)
        return gr.update(visible=bool(code[1])), *code

    experiment.change(
        shown,
        inputs=experiment,
        outputs=[box, note, *boxes],
        show_progress="hidden",
    )
