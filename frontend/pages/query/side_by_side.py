"""Query side by side: the question asked of several configurations at once, each column
searched then answered (frontend/pages/query/query_columns.py), and the page's first minute
(first_minute.py): the sample's first question filled in on load, or as soon as the
background load is done.

The handlers (`SideBySide`) come first, then the section's own components (`section`), then
the wiring to the page's parts (`wire`).
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from chunklab.client import ChunkLab
from chunklab.views.metric_format import MetricFormat
from frontend.errors import said_in_place, told_as_sentence, user_error
from frontend.forms import experiment_config
from frontend.pages.query import answer_html, coverage, first_minute, query_columns
from frontend.pages.query.query_form import MODEL_AT, OPTIONS_COUNT, form_options
from frontend.views import experiments_html
from frontend.views.formatting import message_html


class SideBySide:
    """The side-by-side handlers for one gateway. `form` values: form_options' inputs
    (documents … embedding model, the four reranking boxes), then the answer model's base
    URL, model and key."""

    def __init__(self, gateway: ChunkLab):
        self.gateway = gateway

    def question_set_update(self, sets, chosen):
        choices = [(experiments_html.question_set_label(s), s.question_set_id) for s in sets]
        return gr.update(choices=choices, value=chosen)

    def questions_of(self, set_id, question_id=None):
        if not set_id:
            return gr.update(choices=[], value=None)
        with told_as_sentence():
            choices = query_columns.question_choices(self.gateway.get_question_set(set_id))
        return gr.update(choices=choices, value=question_id)

    def question_text(self, set_id, question_id):
        """The picked question, written into the question box."""
        if not (set_id and question_id):
            return gr.skip()
        with told_as_sentence():
            found = [q for q in self.gateway.get_question_set(set_id).questions if q.question_id == question_id]
        return found[0].text if found else gr.skip()

    def column_choices(self, model_name):
        with told_as_sentence():
            sets = self.gateway.list_indexed_sets(embedding_model=model_name or "")
        return query_columns.configuration_choices(sets, model_name or self.gateway.settings.embedding_model)

    def configuration_update(self, current, model_name):
        """Every configuration indexed with the model, the picks that still exist kept, else
        the ones the page opens on (query_columns.default_configurations)."""
        choices = self.column_choices(model_name)
        values = {value for _, value in choices}
        kept = [value for value in current or [] if value in values]
        return gr.update(choices=choices, value=kept or query_columns.default_configurations(choices))

    def fresh_configurations(self, model_name):
        """The choices only: the picks stay as the user is making them."""
        return gr.update(choices=self.column_choices(model_name))

    def compared(self, text, question, note, picks, options, answer_model):
        """The columns' HTML: searched, then again each time one more column is answered."""
        with told_as_sentence():
            strategies = {info.name: info for info in self.gateway.list_strategies()}
            formats = MetricFormat(self.gateway.list_metrics() if question is not None else [])
        columns = query_columns.search_all(self.gateway, text, options, picks)
        names = self.unnamed_documents(columns)
        yield query_columns.columns_html(columns, question, formats, note, options, strategies, names)
        for answered in query_columns.answer_all(self.gateway, text, options, columns, answer_model):
            yield query_columns.columns_html(answered, question, formats, note, options, strategies, names)

    def unnamed_documents(self, columns) -> dict[str, str]:
        """The documents' names by id, when a column did not search a document the retriever
        has never indexed (it knows the names of those it has); else nothing is asked."""
        if not any(
            not missed.document_name
            for column in columns
            if column.response is not None
            for missed in column.response.uncovered_documents
        ):
            return {}
        with told_as_sentence():
            return {d.document_id: d.name for d in self.gateway.list_documents()}

    @said_in_place(outputs=1)
    def process_missing(self, event: gr.EventData, question_text_value, picked_values, set_id, question_id, *form):
        """A column's "Process with this configuration" (coverage.py): the documents it did not
        search processed with its strategy and knobs, then every column searched again."""
        data = getattr(event, "_data", None) or {}
        strategy, config_id = str(data.get("strategy") or ""), str(data.get("config_id") or "")
        documents = str(data.get("documents") or "").split()
        if not (strategy and documents):
            return
        model = form[MODEL_AT] or ""
        with told_as_sentence():
            sets = self.gateway.list_indexed_sets(strategy=strategy, embedding_model=model)
            names = {d.document_id: d.name for d in self.gateway.list_documents()}
        try:
            spec = coverage.spec_for(strategy, config_id, sets)
        except ValueError as exc:
            raise user_error(str(exc)) from None
        yield message_html(coverage.processed_sentence(spec, [names.get(d, d) for d in documents]), "info")
        failed = []
        for document_id in documents:
            with told_as_sentence():
                result = self.gateway.process(document_id, [spec], model)
            failed += [f"'{names.get(document_id, document_id)}': {f.reason}" for f in result.strategies_failed]
        if failed:
            raise user_error(f"{strategy} could not process {'; '.join(failed)}.")
        yield from self.side_by_side(question_text_value, picked_values, set_id, question_id, *form)

    @staticmethod
    def checked_options(form_values, answer_values):
        """The shared retrieval options and the answer model, or the input's refusal in place."""
        try:
            return (
                answer_html.retrieval_options("", **form_options(*form_values)),
                experiment_config.endpoint(*answer_values),
            )
        except ValueError as exc:
            raise user_error(str(exc)) from None

    @said_in_place(outputs=1)
    def side_by_side(self, question_text_value, picked_values, set_id, question_id, *form):
        if not (question_text_value or "").strip():
            raise user_error("Type a question first, or pick one from a question set.")
        try:
            offered = self.column_choices(form[MODEL_AT])
            picks = query_columns.chosen(picked_values or [], offered)
            query_columns.check_count(picks, offered)
        except ValueError as exc:
            raise user_error(str(exc)) from None
        options, answer_model = self.checked_options(form[:OPTIONS_COUNT], form[OPTIONS_COUNT:])
        with told_as_sentence():
            chosen_set = self.gateway.get_question_set(set_id) if set_id and question_id else None
        question, note = query_columns.picked_question(chosen_set, question_id or "", question_text_value)
        yield from self.compared(question_text_value.strip(), question, note, picks, options, answer_model)

    def opening(self, waiting: bool):
        """The page's first minute: the sample's first question asked of the configurations
        the page opens on, columns filled, before anyone types (first_minute.py).
        On loading the page (`waiting` False) the lists are filled whatever happens, and
        without the sample the columns say why; on the timer's tick (`waiting`) nothing
        changes until the sample is there. The timer stops once the page is filled or
        the user has typed a question."""

        @said_in_place(outputs=6, at=4)
        def handler(set_id, question_value, picks, *form):
            stop = gr.update(active=False)
            typed = bool((question_value or "").strip())
            sample = self.gateway.settings.sample
            if waiting and typed:
                yield (*[gr.skip()] * 5, stop)
                return
            with told_as_sentence():
                sets = self.gateway.list_question_sets()
            sample_id = first_minute.sample_set_id(sets)
            if waiting and sample_id is None:
                yield (*[gr.skip()] * 6,)
                return
            offered = self.column_choices(form[MODEL_AT])
            with told_as_sentence():
                view = (
                    None
                    if typed or sample_id is None
                    else first_minute.first_view(self.gateway.get_question_set(sample_id), offered)
                )
            if view is None:
                if waiting:
                    yield (*[gr.skip()] * 6,)
                    return
                ids = [s.question_set_id for s in sets]
                chosen = set_id if set_id in ids else (sample_id or (ids[0] if ids else None))
                kept = [value for value in picks or [] if value in {v for _, v in offered}]
                yield (
                    self.question_set_update(sets, chosen),
                    self.questions_of(chosen),
                    gr.skip(),
                    gr.update(choices=offered, value=kept or query_columns.default_configurations(offered)),
                    gr.skip() if typed else message_html(first_minute.without_sample(sample), "info"),
                    gr.update(active=sample and not typed),
                )
                return
            options, answer_model = self.checked_options(form[:OPTIONS_COUNT], form[OPTIONS_COUNT:])
            picks = query_columns.chosen(view.configurations, offered)
            filled = self.compared(view.question.text, view.question, "", picks, options, answer_model)
            yield (
                self.question_set_update(sets, view.question_set_id),
                self.questions_of(view.question_set_id, view.question.question_id),
                view.question.text,
                gr.update(choices=offered, value=view.configurations),
                next(filled),
                stop,
            )
            for html in filled:
                yield (*[gr.skip()] * 4, html, gr.skip())

        return handler


# A column's "Process with this configuration" button (query_columns.html.j2) hands its
# column's strategy, configuration and missing documents to SideBySide.process_missing.
PROCESS_ON_CLICK = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('button.cl-process-missing');
  if (!button || button.disabled) return;
  button.disabled = true;
  button.textContent = 'Processing…';
  trigger('click', {strategy: button.dataset.strategy, config_id: button.dataset.configId,
                    documents: button.dataset.documents});
});
"""


def section() -> tuple[gr.Dropdown, gr.Button, gr.HTML, gr.Timer]:
    """The configurations to compare, the button, the columns, and the timer that looks for
    the sample while `make up` is still loading it (stopped once the page is filled)."""
    gr.Markdown("#### Side by side: the question asked of several configurations")
    with gr.Row(equal_height=True):
        configurations = gr.Dropdown(
            label=f"Configurations (strategy · knobs · model), up to {query_columns.MAX_COLUMNS}",
            choices=[],
            multiselect=True,
            max_choices=query_columns.MAX_COLUMNS,
            scale=4,
            elem_id="query-configurations",
        )
        button = gr.Button("Search side by side", scale=0, elem_id="side-by-side-button")
    columns = gr.HTML(elem_id="query-columns", js_on_load=PROCESS_ON_CLICK)
    timer = gr.Timer(first_minute.POLL_SECONDS, active=False)
    return configurations, button, columns, timer


@dataclass(frozen=True)
class Parts:
    """The Query page's components the side-by-side part reads and writes. `form`: the
    inputs of form_options (documents … embedding model, the four reranking boxes), then the
    answer model's base URL, model and key."""

    page: gr.Blocks
    question: gr.Textbox
    question_set: gr.Dropdown
    picked: gr.Dropdown
    configurations: gr.Dropdown
    embedding: gr.Dropdown
    button: gr.Button
    columns: gr.HTML
    timer: gr.Timer
    form: list


def wire(gateway: ChunkLab, parts: Parts) -> None:
    """The side-by-side handlers, wired to the page's parts."""
    handlers = SideBySide(gateway)
    parts.question_set.input(
        handlers.questions_of, inputs=parts.question_set, outputs=parts.picked, show_progress="hidden"
    )
    parts.picked.input(
        handlers.question_text,
        inputs=[parts.question_set, parts.picked],
        outputs=parts.question,
        show_progress="hidden",
    )
    # Strategies processed on the Documents tab since the page loaded show up on opening the list.
    parts.configurations.focus(
        handlers.fresh_configurations, inputs=parts.embedding, outputs=parts.configurations, show_progress="hidden"
    )
    parts.embedding.change(
        handlers.configuration_update, inputs=[parts.configurations, parts.embedding], outputs=parts.configurations
    )
    search_inputs = [parts.question, parts.configurations, parts.question_set, parts.picked, *parts.form]
    parts.button.click(handlers.side_by_side, inputs=search_inputs, outputs=parts.columns)
    parts.columns.click(handlers.process_missing, inputs=search_inputs, outputs=parts.columns)
    opening_inputs = [parts.question_set, parts.question, parts.configurations, *parts.form]
    opening_outputs = [
        parts.question_set,
        parts.picked,
        parts.question,
        parts.configurations,
        parts.columns,
        parts.timer,
    ]
    parts.page.load(handlers.opening(False), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")
    parts.timer.tick(handlers.opening(True), inputs=opening_inputs, outputs=opening_outputs, show_progress="hidden")
