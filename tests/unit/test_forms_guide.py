"""Forms that guide (issue 27 item 6, ADR 0089, ADR 0090), on hand-built forms and gateways:
a knob value the chunker would refuse is named beside its field with what it needs and what was
entered, and the note stays until the value is fixed; a value below its sensible minimum is warned
about and its set is not made active without consent; top_k 0 typed is refused with its default
named, in the form and on the command line; a refused upload keeps the selected document and
names the file; and the smaller messages of item 9 say things in a person's words."""

from __future__ import annotations

import gradio as gr
import grpc
import pytest

from chunklab import knobs, retrieval
from chunklab.client import ClientError
from chunklab.knobs import INT, Knob, KnobError
from chunklab.settings import Settings, variable
from chunklab.v1 import chunker_pb2, common_pb2
from chunklab_app import export
from frontend.forms import field_notes
from frontend.forms import knobs as forms
from frontend.forms import retrieval as retrieval_form
from frontend.pages.documents import document_list, processing
from frontend.pages.query import answer_html
from frontend.views import formatting
from services.chunker.strategies import REGISTRY
from tests.support.fake_stubs import FakeRpcError

SIZE = Knob("chunk_size", INT, 512, "Tokens per chunk (a hard maximum).", 8, 8192)
OVERLAP = Knob("chunk_overlap", INT, 64, "Tokens shared with the previous chunk.", 0, 8191)
FIXED = forms.strategy_forms(
    [chunker_pb2.StrategyInfo(name="fixed_size", knobs=[SIZE.to_proto(), OVERLAP.to_proto()])]
)[0]


def notes(values) -> list[tuple[str, str, str]]:
    checked = field_notes.check_form(FIXED, values)
    return [(n.knob, n.level, n.sentence) for n in checked.notes]


# -- the notes beside the fields ------------------------------------------------------------


def test_a_value_below_the_hard_minimum_is_named_with_what_it_needs_and_what_was_entered():
    assert notes([1.5, 0]) == [("chunk_size", "error", "chunk_size takes a whole number; you entered 1.5.")]
    assert notes([4, 0]) == [("chunk_size", "error", "chunk_size must be at least 8 tokens; you entered 4.")]
    assert notes([9000, 0]) == [("chunk_size", "error", "chunk_size must be at most 8192 tokens; you entered 9000.")]


def test_every_bad_field_is_named_not_only_the_first():
    assert [knob for knob, _, _ in notes([4, -1])] == ["chunk_size", "chunk_overlap"]


def test_a_rule_between_two_knobs_is_named_by_the_knob_that_breaks_it():
    assert notes([100, 100]) == [
        ("chunk_overlap", "error", "chunk_overlap must be smaller than chunk_size (100); you entered 100.")
    ]


def test_a_value_below_its_sensible_minimum_is_a_warning_and_the_spec_is_still_made():
    checked = field_notes.check_form(FIXED, [8, 0])
    assert not checked.refused and checked.spec == knobs.to_spec("fixed_size", {"chunk_size": 8, "chunk_overlap": 0})
    assert [(n.knob, n.level) for n in checked.notes] == [("chunk_size", "warning")]
    assert checked.notes[0].sentence.startswith("chunk_size 8 is below 32 tokens, the smallest that usually retrieves")
    html = field_notes.notes_html(checked)
    assert 'data-knob="chunk_size"' in html and "cl-field-warning" in html and "Warning: chunk_size 8" in html


def test_a_fixed_value_leaves_no_note():
    assert notes([256, 0]) == [] and field_notes.notes_html(field_notes.check_form(FIXED, [256, 0])) == ""
    assert notes([None, None]) == []  # empty boxes: the defaults


def test_the_field_says_its_range_and_its_sensible_minimum_under_it():
    assert SIZE.range_text() == "8 to 8192 tokens; below 32 is warned about"
    assert OVERLAP.range_text() == "0 to 8191 tokens"


def test_no_strategy_s_default_is_below_its_sensible_minimum():
    for name in REGISTRY.names():
        for knob in REGISTRY.get(name).knobs:
            assert knob.warning(name, knob.default) is None, (name, knob.name)


# -- processing with the notes --------------------------------------------------------------


class Chunker:
    """A gateway that records the activation ProcessDocument is asked for and completes."""

    settings = Settings()

    def __init__(self):
        self.activations = []

    def process_document(self, document_id, specs, embedding_model="", activation=0):
        self.activations.append(activation)
        progress = chunker_pb2.StrategyProgress(strategy="fixed_size", phase=chunker_pb2.STRATEGY_PHASE_COMPLETED)
        yield chunker_pb2.ProcessDocumentEvent(progress=progress)
        completed = chunker_pb2.StrategyOutcome(strategy="fixed_size", chunk_count=3, config_id="c1")
        yield chunker_pb2.ProcessDocumentEvent(
            result=chunker_pb2.ProcessDocumentResult(strategies_completed=[completed])
        )


def form_and_values(gateway, size, anyway=False, document="d1"):
    use, size_box, overlap_box, note = gr.Checkbox(), gr.Number(), gr.Number(), gr.HTML()
    selected, model, tick, status = gr.Dropdown(), gr.Dropdown(), gr.Checkbox(), gr.HTML()
    group = processing._Group(FIXED, use, [size_box, overlap_box], note)
    form = processing.ProcessForm(gateway, [group], selected, model, tick, status)
    values = {use: True, size_box: size, overlap_box: 0, selected: document, model: "", tick: anyway}
    return form, values, note, status


def run(form, values) -> list[dict]:
    return list(form.run(values, progress=lambda *_a, **_k: None))


def test_a_refused_value_keeps_its_note_and_replaces_the_last_outcome_in_the_status():
    gateway = Chunker()
    form, values, note, status = form_and_values(gateway, 1.5)
    (shown,) = run(form, values)
    assert gateway.activations == []  # nothing was sent
    assert "chunk_size takes a whole number; you entered 1.5." in shown[note]["value"] and shown[note]["visible"]
    assert shown[status] == formatting.message_html(field_notes.FIX_THE_FIELDS, "error")


def test_a_warned_value_is_indexed_beside_the_active_set_unless_the_user_consents():
    gateway = Chunker()
    form, values, note, status = form_and_values(gateway, 8)
    outputs = run(form, values)
    assert gateway.activations == [common_pb2.ACTIVATION_KEEP_CURRENT]
    assert "Warning: chunk_size 8 is below 32 tokens" in outputs[0][note]["value"]
    assert "Indexed beside the active sets, which stay as they were: fixed_size chunk_size=8" in outputs[-1][status]

    form, values, _, status = form_and_values(gateway, 8, anyway=True)
    outputs = run(form, values)
    assert gateway.activations[-1] == common_pb2.ACTIVATION_MAKE_ACTIVE
    assert "Indexed beside" not in outputs[-1][status]


def test_a_bulk_load_with_a_warned_value_waits_for_consent():
    form, values, _, status = form_and_values(Chunker(), 8)
    (shown,) = list(form.run_bulk(values, progress=lambda *_a, **_k: None))
    assert "Not loaded: a bulk load makes every set it indexes the active one" in shown[status]


# -- top_k -----------------------------------------------------------------------------------


def test_top_k_0_typed_in_a_form_is_refused_with_its_default_named():
    # As the boxes open: the optional ones empty (unset), the others at their value or 0.
    row = [
        False if s.kind is bool else retrieval_form.VALUES.get(s.path, None if s.optional else 0)
        for s in retrieval_form.ROW
    ]
    top_k_at = [s.path for s in retrieval_form.ROW].index("top_k")
    row[top_k_at] = 0
    with pytest.raises(
        ValueError, match=r"^top_k must be between 1 and 100, got 0; leave it empty for the default, 5\.$"
    ):
        retrieval_form.row_values(row)
    row[top_k_at] = None  # an emptied box: the default
    assert retrieval_form.row_values(row)["top_k"] == 5
    row[top_k_at] = 101
    with pytest.raises(ValueError, match=r"^top_k must be between 1 and 100, got 101\.$"):
        retrieval_form.row_values(row)


def test_the_contract_keeps_0_as_the_default_so_the_retriever_and_the_evaluator_agree():
    retrieval.check_options(common_pb2.RetrievalOptions(strategy="fixed_size", top_k=0))
    assert retrieval.top_k(common_pb2.RetrievalOptions()) == 5


# -- a refused upload ------------------------------------------------------------------------


class Refusing:
    settings = Settings()

    def upload_document(self, path, collection, language=""):
        raise ClientError.from_rpc_error(
            "ingest",
            "127.0.0.1:1",
            FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, "'broken.pdf' is a damaged PDF that cannot be read"),
        )


def test_a_refused_upload_keeps_the_selected_document_and_names_the_file(tmp_path):
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.7")
    status, wanted, box = document_list.Listing(Refusing()).upload(str(path), "", "", "doc-7")
    assert wanted == "doc-7" and box == gr.skip()
    assert status == formatting.message_html(
        "Not uploaded: 'broken.pdf' is a damaged PDF that cannot be read.", "error"
    )
    status, wanted, _ = document_list.Listing(Refusing()).upload(None, "", "", "doc-7")
    assert wanted == "doc-7" and "Choose a Markdown, plain-text, DOCX, PDF or HTML file first." in status


def test_a_refusal_that_does_not_quote_the_file_names_it():
    said = document_list.upload_refused("notes.md", "The ingest service at 127.0.0.1:1 is unreachable")
    assert said == "notes.md was not uploaded: The ingest service at 127.0.0.1:1 is unreachable."


# -- the smaller messages of item 9 ----------------------------------------------------------


def test_the_exported_code_names_the_token_variable_the_settings_read(monkeypatch):
    assert variable("auth_token") == "CHUNKLAB_AUTH_TOKEN"
    monkeypatch.setenv(variable("auth_token"), "a-token-of-sixteen-chars")
    assert Settings().auth_token == "a-token-of-sixteen-chars"
    code = export.chunklab_snippet(knobs.to_spec("fixed_size", {"chunk_size": 256}))
    assert "CHUNKLAB_AUTH_TOKEN" in code and "API_TOKEN" not in code


def test_an_extractive_answer_over_an_empty_context_is_not_flagged_as_missing_from_it():
    notice = "The retrieved context is empty: there is nothing to answer from."
    assert answer_html.cited_pieces(notice, []) == []


def test_knob_errors_keep_their_parts_for_a_form_and_their_wording_for_a_service():
    with pytest.raises(KnobError) as raised:
        SIZE.coerce("fixed_size", 4)
    assert raised.value.message == "fixed_size.chunk_size must be at least 8 tokens, got 4"
    assert (raised.value.strategy, raised.value.knob) == ("fixed_size", "chunk_size")


def test_the_command_line_warns_about_a_size_below_its_sensible_minimum():
    infos = [chunker_pb2.StrategyInfo(name="fixed_size", knobs=[SIZE.to_proto(), OVERLAP.to_proto()])]
    specs = [knobs.to_spec("fixed_size", {"chunk_size": 8, "chunk_overlap": 0})]
    (warning,) = knobs.spec_warnings(infos, specs)
    assert str(warning).startswith("fixed_size.chunk_size 8 is below 32 tokens, the smallest that usually retrieves")
    assert knobs.spec_warnings(infos, [knobs.to_spec("fixed_size", {"chunk_size": 64, "chunk_overlap": 0})]) == []
