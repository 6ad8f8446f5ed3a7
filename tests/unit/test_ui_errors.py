"""Calm pages (issue 18, finding 4): a failure reads as one sentence in the page's own
status area, without the service's status code and without "Error" pills, and the
experiment detail's Resume and Cancel are enabled only where they can act."""

from __future__ import annotations

import gradio as gr
import grpc

from chunklab.client import ClientError
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2
from frontend.errors import said_in_place, told_as_sentence, told_sentence, user_error
from frontend.forms import knobs
from frontend.pages.documents.processing import followed
from frontend.pages.experiments.detail import action_updates, experiment_actions
from frontend.pages.experiments.experiment_form import follow_experiment
from frontend.views import formatting
from tests.support.fake_stubs import FakeRpcError

OVERLAP = "fixed_size.chunk_overlap (600) must be smaller than chunk_size (512)"
NOTHING_INDEXED = (
    "retriever: nothing is indexed with the embedding model 'multilingual-e5-small' yet; process a document first"
)
FINISHED = "experiment e1 is succeeded; only interrupted or failed experiments resume"


def refusal(service: str, code: grpc.StatusCode, details: str) -> ClientError:
    return ClientError.from_rpc_error(service, "127.0.0.1:4", FakeRpcError(code, details))


def error_line(sentence: str) -> str:
    return formatting.message_html(sentence, "error")


def test_a_refusal_reads_as_the_services_sentence_without_its_status_code():
    overlap = refusal("chunker", grpc.StatusCode.INVALID_ARGUMENT, OVERLAP)
    assert overlap.message == f"chunker service: INVALID_ARGUMENT: {OVERLAP}"  # what the pages used to show
    assert told_sentence(overlap) == OVERLAP + "."  # a knob's name keeps its spelling
    assert told_sentence(refusal("evaluator", grpc.StatusCode.FAILED_PRECONDITION, NOTHING_INDEXED)) == (
        "Retriever: nothing is indexed with the embedding model 'multilingual-e5-small' yet; process a document first."
    )
    assert (
        told_sentence(refusal("evaluator", grpc.StatusCode.FAILED_PRECONDITION, "line 78: corpus x is missing."))
        == "Line 78: corpus x is missing."
    )
    # A service out of reach keeps its address: that is what a person must check.
    down = refusal("evaluator", grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")
    assert told_sentence(down) == down.message
    assert down.message.startswith("The evaluator service at 127.0.0.1:4 is unreachable")
    # A refusal made before any call has no service to strip.
    assert told_sentence(ClientError("Upload a file first.")) == "Upload a file first."


def test_told_as_sentence_raises_the_sentence_for_gradio():
    try:
        with told_as_sentence():
            raise refusal("evaluator", grpc.StatusCode.FAILED_PRECONDITION, FINISHED)
    except gr.Error as exc:
        assert exc.message == "Experiment e1 is succeeded; only interrupted or failed experiments resume."
    else:
        raise AssertionError("told_as_sentence let the refusal through")


def test_said_in_place_writes_a_refusal_into_the_status_and_leaves_the_other_outputs():
    @said_in_place(outputs=2)
    def do_import(path):
        if not path:
            raise user_error("Choose a .jsonl or .csv file of questions first.")
        with told_as_sentence():
            raise refusal("evaluator", grpc.StatusCode.FAILED_PRECONDITION, "line 78: no document 'chroma-x'")

    assert do_import("") == (error_line("Choose a .jsonl or .csv file of questions first."), gr.skip())
    assert do_import("q.csv") == (error_line("Line 78: no document 'chroma-x'."), gr.skip())

    @said_in_place(outputs=2)
    def run(config, progress=None):
        yield formatting.message_html("Running… starting…"), gr.skip()
        raise user_error("Experiment e1 is succeeded; only interrupted or failed experiments resume.")

    assert list(run("c")) == [
        (formatting.message_html("Running… starting…"), gr.skip()),
        (error_line("Experiment e1 is succeeded; only interrupted or failed experiments resume."), gr.skip()),
    ]

    @said_in_place(outputs=3, at=2)  # the status after the outputs it leaves alone
    def remove(question_id):
        raise user_error("Choose a question set and a question first.")

    assert remove("") == (gr.skip(), gr.skip(), error_line("Choose a question set and a question first."))

    @said_in_place(outputs=1)
    def save(name):
        return formatting.message_html(f"saved {name}", "ok")

    assert save("news") == formatting.message_html("saved news", "ok")


def overlap_form() -> knobs.StrategyForm:
    def whole(name: str, default: int) -> chunker_pb2.KnobSpec:
        return chunker_pb2.KnobSpec(
            name=name,
            type=chunker_pb2.KNOB_TYPE_INT,
            min_value=0,
            max_value=8192,
            default_value=common_pb2.KnobValue(int_value=default),
        )

    info = chunker_pb2.StrategyInfo(name="fixed_size", knobs=[whole("chunk_size", 512), whole("chunk_overlap", 64)])
    (form,) = knobs.strategy_forms([info])
    return form


def test_processing_checks_the_knob_rules_before_calling_and_says_so_in_the_status():
    calls = []

    def steps():
        spec = knobs.strategy_spec(overlap_form(), [512, 600])  # the rule chunklab.knobs owns
        calls.append(spec)
        yield 1.0, "done", "never shown"

    shown = list(followed(steps, lambda *_, **__: None))
    # The stale "Processing… waiting" line gives way to the knob's sentence; nothing was sent.
    assert shown == [error_line("fixed_size.chunk_overlap must be smaller than chunk_size (512), got 600.")]
    assert calls == []


def test_a_processing_refused_midway_ends_with_the_services_sentence():
    progress = []

    def steps():
        yield 0.0, "starting", "Processing… fixed_size: waiting"
        raise refusal("chunker", grpc.StatusCode.INVALID_ARGUMENT, OVERLAP)

    shown = list(followed(steps, lambda fraction, desc: progress.append((fraction, desc))))
    assert shown == ["Processing… fixed_size: waiting", error_line(OVERLAP + ".")]
    assert progress == [(0.0, "starting")]


class Evaluator:
    """The two calls the experiment detail makes here, answered from hand-built values."""

    def __init__(self, state: int = evaluator_pb2.EXPERIMENT_STATE_SUCCEEDED):
        self.state = state

    def list_metrics(self):
        return []

    def get_experiment(self, experiment_id: str, without_results: bool = False):
        if experiment_id == "gone":
            raise refusal("evaluator", grpc.StatusCode.NOT_FOUND, "no experiment gone")
        return evaluator_pb2.Experiment(experiment_id=experiment_id, state=self.state)


def test_resume_on_a_finished_experiment_shows_the_refusal_not_running():
    def refused_stream():
        raise refusal("evaluator", grpc.StatusCode.FAILED_PRECONDITION, FINISHED)
        yield  # a generator, as the client's streams are: nothing is called until read

    shown = list(follow_experiment(Evaluator(), refused_stream(), lambda *_, **__: None))
    assert shown == [
        (error_line("Experiment e1 is succeeded; only interrupted or failed experiments resume."), gr.skip())
    ]


def test_resume_and_cancel_are_enabled_only_where_they_can_act():
    state = {
        name: getattr(evaluator_pb2, f"EXPERIMENT_STATE_{name}")
        for name in ("PENDING", "RUNNING", "SUCCEEDED", "FAILED", "INTERRUPTED")
    }
    expected = {  # (Resume, Cancel)
        "PENDING": (False, True),
        "RUNNING": (False, True),
        "SUCCEEDED": (False, False),
        "FAILED": (True, False),
        "INTERRUPTED": (True, False),
    }
    for name, (resume, cancel) in expected.items():
        assert action_updates(state[name]) == (gr.update(interactive=resume), gr.update(interactive=cancel)), name
    off = (gr.update(interactive=False), gr.update(interactive=False))
    assert action_updates(None) == off
    assert experiment_actions(Evaluator(state["INTERRUPTED"]), "e1") == (
        gr.update(interactive=True),
        gr.update(interactive=False),
    )
    assert experiment_actions(Evaluator(), "e1") == off
    assert experiment_actions(Evaluator(), "gone") == off
    assert experiment_actions(Evaluator(), "") == off
