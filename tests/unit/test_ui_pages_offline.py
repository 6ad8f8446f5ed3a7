"""The Documents, Freshness, Query, Experiments and Compare pages with their services
out of reach (issue 18, calm pages): every refresh of a dropdown or a list says so in one sentence where its list
goes and leaves the dropdown as it was, never turning it into an "Error" pill; and what
the Documents page decides by itself (the document a fresh page opens on, what Delete
asks) from hand-built documents."""

from __future__ import annotations

import gradio as gr
import grpc
import pytest

from chunklab.client import ClientError
from chunklab.settings import Settings
from chunklab.v1 import documents_pb2, retriever_pb2
from chunklab_app import samples
from frontend.pages import documents, freshness
from frontend.pages.documents import document_list
from frontend.views import formatting
from tests.support.fake_stubs import FakeRpcError

ADDRESS = "127.0.0.1:4"
DOWN = (
    f"The retriever service at {ADDRESS} is unreachable or too slow (UNAVAILABLE): check that it is running "
    "and that the address is right"
)
SAID = formatting.message_html(DOWN, "error")


class Down:
    """A gateway whose every call finds its service out of reach, as ChunkLab reports it."""

    settings = Settings()

    def __getattr__(self, name):
        def call(*_args, **_kwargs):
            raise ClientError.from_rpc_error(
                "retriever", ADDRESS, FakeRpcError(grpc.StatusCode.UNAVAILABLE, "failed to connect to all addresses")
            )

        return call


def handlers(page: gr.Blocks) -> dict[str, list]:
    """The page's event handlers by name (one name may serve several events)."""
    found: dict[str, list] = {}
    for block_fn in page.fns.values():
        found.setdefault(block_fn.name, []).append(block_fn)
    return found


@pytest.fixture(scope="module")
def documents_page():
    return handlers(documents.build(Down()))


@pytest.fixture(scope="module")
def freshness_page():
    return handlers(freshness.build(Down()))


def outputs(block_fn, result) -> dict[str, object]:
    """What one call wrote, by the output's elem_id."""
    values = result if isinstance(result, tuple) else (result,)
    return {getattr(o, "elem_id", None) or f"#{i}": v for i, (o, v) in enumerate(zip(block_fn.outputs, values))}


def test_the_documents_page_says_a_service_is_down_where_its_lists_go(documents_page):
    (load,) = documents_page["load"]
    wrote = outputs(load, load.fn(None, None, None))
    assert wrote["process-status"] == SAID and wrote["delete-status"] == SAID
    assert wrote["document-select"] == gr.skip() and wrote["documents-table"] == gr.skip()

    refresh = documents_page["refresh"][0]
    assert outputs(refresh, refresh.fn("doc-1")) == {
        "document-select": gr.skip(),
        "documents-table": gr.skip(),
        "delete-status": SAID,
    }

    show_indexed = documents_page["show_indexed"][0]
    wrote = outputs(show_indexed, show_indexed.fn("doc-1", [], None))
    assert wrote["indexed-sets"] == SAID and wrote["set-select"] == gr.skip()

    (set_choices,) = documents_page["set_choices"]
    wrote = outputs(set_choices, set_choices.fn("doc-1", "fixed_size/abc", None))
    assert wrote["viewer-summary"] == SAID
    assert wrote["viewer-left-set"] == gr.update() and wrote["viewer-right-set"] == gr.update()

    bulk = documents_page["show_bulk_loads"][0]
    assert bulk.fn() == SAID

    on_load, on_opening = documents_page["first_view"]
    assert on_load.fn is on_opening.fn
    first_view = on_load
    assert first_view.fn(None, []) == (gr.skip(),) * 4  # nothing to draw: nothing said


def test_the_boundaries_are_drawn_when_their_sub_tab_is_opened_and_what_was_shown_stays(documents_page):
    """The sample's boundaries are previewed once the Boundaries sub-tab is opened (the page's
    load calls too, for a sub-tab opened before the strategies were read), never behind another
    sub-tab, and never over what is shown already (ADR 0167)."""
    from chunklab.v1 import chunker_pb2
    from frontend.forms import knobs

    forms = knobs.strategy_forms([chunker_pb2.StrategyInfo(name=n) for n in ("fixed_size", "recursive")])
    (first_view, _) = documents_page["first_view"]
    skipped = (gr.skip(),) * 4
    assert first_view.fn("doc-1", forms, "", False) == skipped  # behind another sub-tab: no call
    assert first_view.fn("doc-1", forms, "<div>shown</div>", True) == skipped  # Show drew it: it stays
    # Opened with nothing shown: the viewer asks for the document (here, a service out of reach says so).
    assert SAID in first_view.fn("doc-1", forms, "", True)


def test_the_freshness_page_says_the_retriever_is_down_where_its_tables_go(freshness_page):
    windows = freshness_page["list_windows"][0]
    assert outputs(windows, windows.fn("news")) == {"windows-table": SAID, "window-collection": gr.skip()}
    archived = freshness_page["list_archived"][0]
    assert outputs(archived, archived.fn(None)) == {"archived-table": SAID, "archived-select": gr.skip()}
    (show_window,) = freshness_page["show_window"]
    assert outputs(show_window, show_window.fn("news")) == {"window-days": gr.skip(), "window-status": SAID}


def document(name: str, content: bytes | None = None, document_id: str = "") -> documents_pb2.Document:
    import hashlib

    return documents_pb2.Document(
        document_id=document_id or f"id-{name}",
        name=name,
        collection="default",
        content_hash=hashlib.sha256(content or name.encode()).hexdigest(),
    )


def test_a_fresh_page_opens_on_the_samples_speech_until_something_newer_is_uploaded():
    speech = document("state_of_the_union.md", samples.SPEECH.read_bytes(), "speech-0001")
    guide = document("rag-field-guide.md", samples.FIELD_GUIDE.read_bytes(), "guide-0001")
    mine = document("notes.md", b"# Notes\n", "notes-0001")
    assert document_list.opening_document([]) is None
    # Newest first, as ListDocuments answers: the guide came last, the speech is opened.
    assert document_list.opening_document([guide, speech]) == "speech-0001"
    assert document_list.opening_document([mine, guide, speech]) == "notes-0001"
    assert document_list.opening_document([guide]) == "guide-0001"  # no speech: the newest
    # Same name, other bytes: not the sample.
    assert not samples.is_sample(document("state_of_the_union.md", b"another speech"))


def test_delete_asks_about_the_document_by_name_with_its_chunk_count():
    notes = document("notes.md", b"# Notes\n", "0123456789abcdef")
    sets = [
        retriever_pb2.IndexedSet(strategy="fixed_size", points=12),
        retriever_pb2.IndexedSet(strategy="recursive", points=30),
    ]
    assert document_list.delete_question(notes, sets) == (
        "Delete notes.md · default · 01234567 and its 42 indexed chunks (2 index sets)? "
        "Experiments keep the results they measured on it."
    )
    assert document_list.delete_question(notes, []) == (
        "Delete notes.md · default · 01234567 and its text (it has no indexed chunks)? "
        "Experiments keep the results they measured on it."
    )


def info_said(update) -> bool:
    """A dropdown or input left as it was, saying under it that the service is down."""
    return isinstance(update, dict) and update.get("info") == DOWN and "value" not in update and "choices" not in update


def test_the_query_experiments_and_compare_pages_say_a_service_is_down_under_their_lists():
    from frontend.forms import retrieval
    from frontend.pages import compare, experiments, query

    query_page, experiments_page, compare_page = (
        handlers(page.build(Down())) for page in (query, experiments, compare)
    )
    (options,) = [f for f in query_page["options"] if len(f.outputs) == 6][:1]
    strategy, documents_list, collections, languages, model, status = options.fn(None, None, None, None, None)
    assert info_said(documents_list) and status == SAID
    (configurations, *_) = query_page["configurations"]
    assert configurations.fn("fixed_size", "", "")[0] == gr.update(info=DOWN)
    # The bounds of top_k and the neighbour, window, recency and fusion inputs (both pages read them on load).
    assert retrieval.retrieval_limit_updates(Down()) == (gr.update(info=DOWN), *(gr.skip(),) * 5)

    (listing, *_) = experiments_page["listing"]
    table, chosen = listing.fn(None)
    assert table == SAID and info_said(chosen)
    (choices, *_) = compare_page["choices"]
    assert info_said(choices.fn(["e1"]))


class Up:
    """A gateway whose services serve their limits (and refuse nothing else asked here)."""

    settings = Settings()

    def retrieval_limits(self):
        from chunklab import retrieval

        return retrieval.LIMITS

    def evaluator_limits(self):
        from chunklab.v1 import evaluator_pb2

        return evaluator_pb2.EvaluatorLimits(max_question_count=7)

    def __getattr__(self, name):
        return Down().__getattr__(name)


def test_the_window_days_and_the_question_count_take_their_bounds_from_the_services_and_keep_them_when_down():
    """No limit is copied into the UI (ADR 0078): each page reads it on load from the service
    that enforces it; a service out of reach leaves the input as it was, saying why under it."""
    from chunklab import retrieval
    from frontend.pages import questions

    freshness_load = [
        f
        for f in handlers(freshness.build(Up())).get("<lambda>", [])
        if [o.elem_id for o in f.outputs] == ["window-days"]
    ]
    questions_load = [
        f
        for f in handlers(questions.build(Up())).get("<lambda>", [])
        if [o.elem_id for o in f.outputs] == ["gen-count"]
    ]
    assert len(freshness_load) == len(questions_load) == 1
    days, count = freshness_load[0].fn(), questions_load[0].fn()
    assert (days["minimum"], days["maximum"]) == (0, retrieval.LIMITS.max_freshness_days)
    assert (count["minimum"], count["maximum"]) == (1, 7)
    # The inputs themselves hold no maximum of their own.
    for page, elem_id in ((freshness.build(Down()), "window-days"), (questions.build(Down()), "gen-count")):
        (box,) = [b for b in page.blocks.values() if getattr(b, "elem_id", None) == elem_id]
        assert box.maximum is None, elem_id

    down = Down()
    down_fns = [
        f
        for page in (freshness.build(down), questions.build(down))
        for f in handlers(page).get("<lambda>", [])
        if [o.elem_id for o in f.outputs] in (["window-days"], ["gen-count"])
    ]
    assert [info_said(f.fn()) for f in down_fns] == [True, True]
