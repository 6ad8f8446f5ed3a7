"""The front end's pure parts: HTML for retrieval results, knob forms, progress
text, the health page's rows and the app's wiring, with hand-built messages
(no server, no browser; the client library's calls are in test_client.py)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from chunklab.client import ChunkLab
from chunklab.v1 import chunker_pb2, common_pb2, documents_pb2, evaluator_pb2, ingest_pb2, retriever_pb2
from frontend.forms import knobs
from frontend.pages.query.answer_html import answer_request
from frontend.pages.query.query_form import ACTIVE_SETS, configuration_choices, default_strategy
from frontend.views import formatting, retrieval_html
from tests.support.fake_stubs import settings

HIT, NEIGHBOR = common_pb2.CHUNK_LABEL_HIT, common_pb2.CHUNK_LABEL_NEIGHBOR
EVIL = "<script>alert('x')</script> & <img src=x onerror=alert(1)>"


def rc(
    index: int, label: int, score: float | None = None, rank: int = 0, content: str = ""
) -> common_pb2.RetrievedChunk:
    chunk = common_pb2.Chunk(
        chunk_id=f"c{index}",
        document_id="d1",
        document_name="guide.md",
        strategy="fixed_size",
        chunk_index=index,
        content=content or f"text of chunk {index}",
        token_count=10 + index,
        start_char=100 * index,
        end_char=100 * index + 90,
    )
    item = common_pb2.RetrievedChunk(chunk=chunk, label=label, rank=rank)
    if score is not None:
        item.score = score
    return item


def sample_response() -> retriever_pb2.RetrieveResponse:
    """Hits 5 (best) and 2, neighbours 1/1: the flat list is 1,2,3,4,5,6 in document order."""
    hit5, hit2 = rc(5, HIT, 0.91, 1), rc(2, HIT, 0.73, 2, content=EVIL)
    flat = [rc(1, NEIGHBOR), hit2, rc(3, NEIGHBOR), rc(4, NEIGHBOR), hit5, rc(6, NEIGHBOR)]
    tree = common_pb2.ExpansionTree(
        hits=[
            common_pb2.ExpansionNode(hit=hit5, neighbors_prev=[rc(4, NEIGHBOR)], neighbors_next=[rc(6, NEIGHBOR)]),
            common_pb2.ExpansionNode(hit=hit2, neighbors_prev=[rc(1, NEIGHBOR)], neighbors_next=[rc(3, NEIGHBOR)]),
        ]
    )
    return retriever_pb2.RetrieveResponse(
        retrieved_chunks=flat,
        expansion_tree=tree,
        embedding_model="all-MiniLM-L6-v2",
        timings=retriever_pb2.RetrieveTimings(embed_ms=3, search_ms=1, expand_ms=1, total_ms=5),
    )


def parse(html: str) -> ET.Element:
    """Our HTML is well-formed XML on purpose, so the tests can walk its structure."""
    return ET.fromstring(html)


# -- retrieved_chunks (flat list) ---------------------------------------------


def test_flat_list_keeps_the_service_order_with_labels_and_scores_for_hits_only():
    root = parse(retrieval_html.flat_list_html(sample_response()))
    items = root.findall(".//li[@data-label]")
    assert [(i.get("data-chunk-index"), i.get("data-label")) for i in items] == [
        ("1", "neighbor"),
        ("2", "hit"),
        ("3", "neighbor"),
        ("4", "neighbor"),
        ("5", "hit"),
        ("6", "neighbor"),
    ]
    scores = {i.get("data-chunk-index"): i.find(".//span[@class='cl-score']") for i in items}
    assert scores["5"].text == "score 0.910" and scores["2"].text == "score 0.730"  # metric_format.score
    assert all(scores[k] is None for k in ("1", "3", "4", "6"))
    text = "".join(items[0].itertext())
    assert "guide.md" in text and "chunk 1" in text and "11 tokens" in text and "chars 100–190" in text


def test_document_text_is_escaped_everywhere():
    response = sample_response()
    response.retrieved_chunks[0].chunk.document_name = "<b>name</b>.md"
    response.retrieved_chunks[0].chunk.heading_path.append("<i>Heading</i>")
    for html in (retrieval_html.flat_list_html(response), retrieval_html.expansion_tree_html(response)):
        assert "<script>" not in html and "<img" not in html and "<b>name" not in html
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &lt;img" in html
        # Escaped text reads back as the original characters.
        assert EVIL in "".join(parse(html).itertext())
    assert "&lt;b&gt;name&lt;/b&gt;.md" in retrieval_html.flat_list_html(response)
    assert "&lt;i&gt;Heading&lt;/i&gt;" in retrieval_html.flat_list_html(response)


def test_empty_results_say_so():
    empty = retriever_pb2.RetrieveResponse()
    assert "No chunks were retrieved" in retrieval_html.flat_list_html(empty)
    assert "No hits" in retrieval_html.expansion_tree_html(empty)


# -- expansion_tree -----------------------------------------------------------


def test_tree_lists_hits_in_score_order_with_neighbours_nested_under_their_own_hit():
    root = parse(retrieval_html.expansion_tree_html(sample_response()))
    nodes = root.findall(".//li[@class='cl-node']")
    assert [n.get("data-rank") for n in nodes] == ["1", "2"]

    def indices(node: ET.Element, role: str) -> list[str]:
        return [e.get("data-chunk-index") for e in node.findall(f".//*[@data-role='{role}']/li")]

    first, second = nodes
    assert first.find("./div[@data-role='hit']").get("data-chunk-index") == "5"
    assert (indices(first, "neighbors_prev"), indices(first, "neighbors_next")) == (["4"], ["6"])
    assert second.find("./div[@data-role='hit']").get("data-chunk-index") == "2"
    assert (indices(second, "neighbors_prev"), indices(second, "neighbors_next")) == (["1"], ["3"])
    # Above the hit, then the hit, then below it.
    roles = [child.get("class") for child in first]
    assert roles == ["cl-group cl-group-neighbors_prev", "cl-chunk cl-hit", "cl-group cl-group-neighbors_next"]
    assert {e.get("data-label") for e in first.findall(".//ul//li")} == {"neighbor"}


def test_tree_without_expansion_still_lists_the_hits():
    response = sample_response()
    for node in response.expansion_tree.hits:
        del node.neighbors_prev[:]
        del node.neighbors_next[:]
    root = parse(retrieval_html.expansion_tree_html(response))
    assert len(root.findall(".//li[@class='cl-node']")) == 2
    assert root.findall(".//ul[@data-role]") == []


def test_tree_shows_window_and_parent_where_a_strategy_sets_them():
    node = common_pb2.ExpansionNode(
        hit=rc(3, HIT, 0.5, 1),
        window=[rc(2, common_pb2.CHUNK_LABEL_WINDOW)],
        parent=rc(9, common_pb2.CHUNK_LABEL_PARENT),
    )
    response = retriever_pb2.RetrieveResponse(expansion_tree=common_pb2.ExpansionTree(hits=[node]))
    root = parse(retrieval_html.expansion_tree_html(response))
    assert root.find(".//ul[@data-role='window']/li").get("data-label") == "window"
    assert root.find(".//ul[@data-role='parent']/li").get("data-label") == "parent"


def test_summary_counts_hits_and_what_expansion_added():
    response = sample_response()
    line = retrieval_html.context_summary_html(response, "<fixed>", response.embedding_model)
    text = "".join(parse(line).itertext())
    assert text == (
        "6 chunks in the context: 2 hits + 4 added by expansion · 81 tokens sent · strategy <fixed>"
        " · embedding model all-MiniLM-L6-v2"
    )


def test_a_parent_child_context_reads_as_parents_holding_the_hits_not_as_zero_hits():
    parents = [rc(1, common_pb2.CHUNK_LABEL_PARENT), rc(2, common_pb2.CHUNK_LABEL_PARENT)]
    tree = common_pb2.ExpansionTree(hits=[common_pb2.ExpansionNode(hit=rc(n, HIT, 0.5, n)) for n in (4, 5, 6)])
    context = evaluator_pb2.AnswerContext(retrieved_chunks=parents, expansion_tree=tree)
    text = "".join(parse(retrieval_html.context_summary_html(context, "parent_child")).itertext())
    assert text == (
        "2 chunks in the context: 2 parents holding the 3 hits (children: see them in the expansion "
        "tree) · 23 tokens sent · strategy parent_child · embedding model (default)"
    )


# -- knob forms ---------------------------------------------------------------


def strategy_info() -> chunker_pb2.StrategyInfo:
    size = chunker_pb2.KnobSpec(
        name="chunk_size",
        type=chunker_pb2.KNOB_TYPE_INT,
        default_value=common_pb2.KnobValue(int_value=512),
        min_value=1,
        max_value=8192,
        description="Tokens per chunk.",
    )
    threshold = chunker_pb2.KnobSpec(
        name="threshold", type=chunker_pb2.KNOB_TYPE_DOUBLE, default_value=common_pb2.KnobValue(double_value=0.5)
    )
    window = chunker_pb2.KnobSpec(
        name="window", type=chunker_pb2.KNOB_TYPE_INT, default_value=common_pb2.KnobValue(int_value=2), query_time=True
    )
    return chunker_pb2.StrategyInfo(name="demo", description="A demo.", knobs=[size, threshold, window])


def test_forms_mirror_the_knob_specs_and_leave_query_time_knobs_out():
    (form,) = knobs.strategy_forms([strategy_info()])
    assert [f.name for f in form.fields] == ["chunk_size", "threshold"]
    size, threshold = form.fields
    assert (size.type, size.default, size.minimum, size.maximum) == ("int", 512, 1.0, 8192.0)
    assert (threshold.type, threshold.default, threshold.minimum) == ("double", 0.5, None)
    assert size.elem_id == "knob-demo-chunk_size"


def test_strategy_spec_types_the_values_and_leaves_empty_ones_to_the_default():
    (form,) = knobs.strategy_forms([strategy_info()])
    spec = knobs.strategy_spec(form, [32.0, None])
    assert spec.name == "demo"
    assert dict(spec.knobs) == {"chunk_size": common_pb2.KnobValue(int_value=32)}
    spec = knobs.strategy_spec(form, [32, 0.7])
    assert spec.knobs["threshold"].double_value == 0.7
    with pytest.raises(ValueError, match="demo.chunk_size takes a whole number"):
        knobs.strategy_spec(form, [32.5, None])


# -- process progress ---------------------------------------------------------


def test_process_tracker_reports_progress_then_completed_and_failed_with_reasons():
    tracker = formatting.ProcessTracker(["fixed_size", "semantic"])
    progress = chunker_pb2.StrategyProgress(
        strategy="fixed_size", phase=chunker_pb2.STRATEGY_PHASE_RUNNING, fraction_done=0.5, message="embedding 4/8"
    )
    tracker.add(chunker_pb2.ProcessDocumentEvent(progress=progress))
    assert tracker.fraction() == 0.25
    assert tracker.description() == "fixed_size: embedding 4/8"
    assert "semantic: waiting" in tracker.html()
    result = chunker_pb2.ProcessDocumentResult(
        embedding_model="m",
        strategies_completed=[chunker_pb2.StrategyOutcome(strategy="fixed_size", chunk_count=8, seconds=1.5)],
        strategies_failed=[chunker_pb2.StrategyFailure(strategy="semantic", reason="needs <more> text")],
    )
    tracker.add(chunker_pb2.ProcessDocumentEvent(result=result))
    root = parse(tracker.html())
    completed = root.find(".//div[@class='cl-completed']")
    failed = root.find(".//div[@class='cl-failed']")
    # Headed in words, not the proto's field names; the cache named as the progress lines name it.
    assert completed.find("b").text == "Completed" and failed.find("b").text == "Failed"
    assert "".join(completed.find(".//li").itertext()) == "fixed_size: 8 chunks in 1.5 s (0 embeddings from the cache)"
    assert "".join(failed.find(".//li").itertext()) == "semantic: needs <more> text"


def test_documents_table_and_choices():
    doc = documents_pb2.Document(
        document_id="0123456789ab",
        name="a.md",
        collection="hr",
        language="en",
        format=documents_pb2.DOCUMENT_FORMAT_MARKDOWN,
        size_bytes=2048,
        character_count=1900,
    )
    pdf = documents_pb2.Document(
        document_id="fedcba987654", name="b.pdf", format=documents_pb2.DOCUMENT_FORMAT_PDF, metadata={"pages": "12"}
    )
    html = documents_pb2.Document(name="c.html", format=documents_pb2.DOCUMENT_FORMAT_HTML)
    row, pdf_row, html_row = formatting.documents_rows([doc, pdf, html])
    assert dict(zip(formatting.DOCUMENT_COLUMNS, row)) == {
        "name": "a.md",
        "collection": "hr",
        "language": "en",
        "format": "Markdown",
        "size": "2.0 KiB",
        "characters": "1,900",
        "pages": "",
        "ingested": "",
        "id": "0123456789ab",
    }
    columns = formatting.DOCUMENT_COLUMNS
    assert (pdf_row[columns.index("format")], pdf_row[columns.index("pages")]) == ("PDF", "12")
    assert (html_row[columns.index("format")], html_row[columns.index("pages")]) == ("HTML", "")
    assert formatting.document_choices([doc]) == [("a.md · hr · 01234567", "0123456789ab")]


def test_the_documents_list_is_a_table_of_rows_each_carrying_its_documents_id_and_its_text_escaped():
    """The page draws the list itself (ADR 0159): each row holds the columns' cells and its
    document's id (a click selects it), a name written as markup stays text, and an empty list
    says how to begin."""
    from xml.etree import ElementTree

    from frontend.pages.documents.document_list import documents_table

    hostile = documents_pb2.Document(document_id="abc-1", name="<img src=x onerror=alert(1)>.md", collection="hr")
    plain = documents_pb2.Document(document_id="def-2", name="b.md")
    table = ElementTree.fromstring(documents_table([hostile, plain]))
    assert [th.text for th in table.iter("th")] == formatting.DOCUMENT_COLUMNS
    rows = table.find("tbody").findall("tr")
    assert [row.get("data-document-id") for row in rows] == ["abc-1", "def-2"]
    assert [td.text or "" for td in rows[0]] == [str(c) for c in formatting.documents_rows([hostile])[0]]
    assert table.find(".//img") is None  # the name is text, not an element
    assert "upload one above" in documents_table([])


def test_upload_message_tells_a_new_upload_from_an_existing_one():
    document = documents_pb2.Document(document_id="d", name="<x>.md", collection="default")
    fresh = formatting.upload_message(ingest_pb2.CreateDocumentResponse(document=document))
    again = formatting.upload_message(ingest_pb2.CreateDocumentResponse(document=document, already_existed=True))
    assert fresh.startswith('<div class="cl-message cl-message-ok">Uploaded &lt;x&gt;.md')
    assert "already uploaded" in again and "<x>" not in again


# -- query form ---------------------------------------------------------------


def test_answer_request_carries_every_knob_and_filter_and_leaves_the_window_unset_when_empty():
    request = answer_request("  why?  ", "fixed_size")
    retrieval = request.retrieval
    assert (request.question, retrieval.strategy, retrieval.config_id, retrieval.top_k) == ("why?", "fixed_size", "", 5)
    assert (retrieval.neighbor_prev, retrieval.neighbor_next, retrieval.HasField("window")) == (0, 0, False)
    assert not request.HasField("answer_model")
    request = answer_request(
        "why?",
        "sentence_window",
        top_k=3,
        neighbor_prev=1,
        neighbor_next=2,
        window=0,
        hybrid=True,
        recency_lambda=0.05,
        document_ids=["d1"],
        collections=["hr"],
        languages=["de"],
        embedding_model="multilingual-e5-small",
        config_id="0123456789abcdef",
    )
    retrieval = request.retrieval
    assert retrieval.config_id == "0123456789abcdef"
    assert (retrieval.top_k, retrieval.neighbor_prev, retrieval.neighbor_next, retrieval.window) == (3, 1, 2, 0)
    assert retrieval.HasField("window") and retrieval.hybrid and retrieval.recency_lambda == 0.05
    assert (
        list(retrieval.filter.document_ids),
        list(retrieval.filter.collections),
        list(retrieval.filter.languages),
    ) == (["d1"], ["hr"], ["de"])
    assert retrieval.embedding_model == "multilingual-e5-small"
    assert default_strategy(["semantic", "fixed_size"], None) == "fixed_size"
    assert default_strategy(["semantic", "fixed_size"], "semantic") == "semantic"
    assert default_strategy([], None) is None


def test_health_reports_a_service_that_is_not_there():
    client = ChunkLab(settings().model_copy(update={"rpc_timeout_s": 0.3}))
    rows = client.service_health()
    assert [(r.service, r.status) for r in rows] == [
        ("ingest", "UNREACHABLE"),
        ("chunker", "UNREACHABLE"),
        ("retriever", "UNREACHABLE"),
        ("evaluator", "UNREACHABLE"),
    ]
    html = formatting.health_html(rows)
    assert 'data-service="ingest" data-status="UNREACHABLE"' in html and "127.0.0.1:1" in html


def test_the_app_is_built_without_calling_any_service():
    """Building the UI only wires callbacks; services are reached when a page loads."""
    from frontend.app import build_app, display_host

    client = ChunkLab(settings())
    app = build_app(client)
    assert client._stubs == {}
    assert app.title == "ChunkLab"
    assert display_host("0.0.0.0") == "127.0.0.1" and display_host("::1") == "[::1]"


def test_the_ui_does_not_summarise_every_event_for_a_dashboard_it_turns_off():
    """Gradio rebuilt a pandas summary of all its events (up to 10,000) after each one, for its
    monitoring dashboard: about 30 ms of the UI's time per event once 150 handlers had run (ADR 0163)."""
    from frontend.app import build_app

    queue = build_app(ChunkLab(settings()))._queue
    records = [{"function": f"handler_{i % 150}", "status": "success", "process_time": 0.01 * i} for i in range(2000)]
    queue.events_recorded = len(records)  # as after 2,000 events
    assert queue.compute_analytics_summary(records) == {"functions": {}}  # nothing computed


def test_the_app_is_built_without_a_web_server_per_page_and_gradio_is_left_as_it_was(monkeypatch):
    """Gradio made a FastAPI app for each Blocks twice while building, 22 thrown away (ADR 0164);
    launch() makes the one that serves (the e2e and browser tests load pages from it)."""
    from gradio import routes

    from frontend.app import build_app

    made = []
    real = routes.App.create_app
    monkeypatch.setattr(routes.App, "create_app", staticmethod(lambda *a, **k: made.append(a) or real(*a, **k)))
    app = build_app(ChunkLab(settings()))
    assert made == [] and app.app is None
    assert len([f for f in app.fns.values() if f.name == "stop"]) == 1  # the pages' handlers are there
    routes.App.create_app(app)  # what launch() calls, unpatched after the build
    assert len(made) == 1


def test_a_page_load_reads_the_stack_only_for_the_tabs_it_opens_on_and_the_others_read_when_opened():
    """A page load ran 47 events, 22 of them for tabs nobody was looking at; the Experiments tab
    opened the newest experiment and drew its plots behind Start here (ADR 0165). Only Start here,
    Documents and Query are filled on load (and what the load chains to); every other page reads
    the stack when its tab is opened."""
    import gradio as gr

    from frontend.app import LOOK_AGAIN_WHEN_OPENED, PAGES, build_app

    app = build_app(ChunkLab(settings()))

    def within(block) -> set[int]:
        return {block._id}.union(*(within(child) for child in getattr(block, "children", [])))

    tabs = {block.id: block for block in app.blocks.values() if isinstance(block, gr.Tab) and block.id}
    opened_later = [tab_id for _, tab_id, module in PAGES if module in LOOK_AGAIN_WHEN_OPENED]
    assert "experiments" in opened_later and "documents" not in opened_later and "query" not in opened_later
    later = set().union(*(within(tabs[tab_id]) for tab_id in opened_later))
    on_load = {fn_id for fn_id, fn in app.fns.items() if any(event == "load" for _, event in fn.targets)}
    while chained := {i for i, fn in app.fns.items() if fn.trigger_after in on_load} - on_load:
        on_load |= chained
    assert on_load
    filled = [app.fns[i].name for i in on_load if {block._id for block in app.fns[i].outputs} & later]
    assert filled == []
    for tab_id in opened_later:
        assert [fn for fn in app.fns.values() if (tabs[tab_id]._id, "select") in fn.targets], tab_id


def test_a_form_drawn_again_keeps_its_handlers_and_inputs():
    """A gr.render can draw twice on one page load (for the load, then for the strategies the load
    fetched). A page that still shows the first drawing must reach the same handlers with the same
    inputs: unkeyed, the second drawing gave Dry run a new handler id and its click failed in
    Gradio's queue (ADR 0032)."""
    import copy

    from gradio.context import LocalContext

    from frontend.app import build_app

    app = build_app(ChunkLab(settings()))
    forms = knobs.strategy_forms([strategy_info()], include_query_time=True)
    session = copy.copy(app.default_config)  # what Gradio keeps per browser session
    renders = session.renderables
    assert len(renders) == 3  # processing, boundary viewer, experiment grids
    for render in renders:
        arguments = [forms] + ["demo"] * (len(render.inputs) - 1)  # the viewer also takes the strategy
        drawings = []
        for _ in range(2):
            token = LocalContext.blocks_config.set(session)
            try:
                render.apply(*arguments)
            finally:
                LocalContext.blocks_config.reset(token)
            drawings.append(
                sorted(
                    (fn_id, tuple(block._id for block in fn.inputs))
                    for fn_id, fn in session.fns.items()
                    if fn.rendered_in is render
                )
            )
        assert drawings[0], "the form has a button with a handler"
        assert drawings[1] == drawings[0]


def test_the_indexed_sets_show_knobs_and_escape_what_they_show():
    indexed = retriever_pb2.IndexedSet(
        strategy="fixed_size",
        config_id="<b>c1</b>",
        points=12,
        spec=common_pb2.StrategySpec(name="fixed_size", knobs={"chunk_size": common_pb2.KnobValue(int_value=32)}),
    )
    html = formatting.indexed_sets_html([indexed], "all-MiniLM-L6-v2")
    assert "chunk_size=32" in html and "&lt;b&gt;c1&lt;/b&gt;" in html and "<b>c1" not in html
    assert "Not indexed with m yet" in formatting.indexed_sets_html([], "m")


def test_two_configurations_of_one_strategy_show_side_by_side_with_the_active_one_marked():
    def indexed(config_id: str, size: int, active: bool, pinned: bool = False) -> retriever_pb2.IndexedSet:
        return retriever_pb2.IndexedSet(
            strategy="fixed_size",
            config_id=config_id,
            points=size // 8,
            active=active,
            pinned=pinned,
            spec=common_pb2.StrategySpec(name="fixed_size", knobs={"chunk_size": common_pb2.KnobValue(int_value=size)}),
        )

    sets = [indexed("c512", 512, True), indexed("c256", 256, False, pinned=True)]
    root = ET.fromstring(formatting.indexed_sets_html(sets, "all-MiniLM-L6-v2"))
    rows = root.findall(".//tr[@data-config-id]")
    assert [(r.get("data-config-id"), r.get("data-active")) for r in rows] == [("c512", "true"), ("c256", "false")]
    assert formatting.set_choices(sets) == [
        ("fixed_size · chunk_size=512 · c512 (active)", "fixed_size/c512"),
        ("fixed_size · chunk_size=256 · c256 (pinned)", "fixed_size/c256"),
    ]


def test_the_query_page_offers_each_configuration_of_a_strategy_and_the_active_sets():

    def indexed(document_id: str, config_id: str, size: int, active: bool, seconds: int) -> retriever_pb2.IndexedSet:
        found = retriever_pb2.IndexedSet(
            document_id=document_id,
            strategy="fixed_size",
            config_id=config_id,
            active=active,
            spec=common_pb2.StrategySpec(name="fixed_size", knobs={"chunk_size": common_pb2.KnobValue(int_value=size)}),
        )
        found.indexed_at.seconds = seconds
        return found

    sets = [
        indexed("d1", "c256", 256, False, 100),
        indexed("d1", "c512", 512, True, 200),
        indexed("d2", "c256", 256, True, 300),
    ]
    assert configuration_choices(sets) == [
        (ACTIVE_SETS, ""),
        ("c256 · chunk_size=256 · 2 documents, active in 1", "c256"),
        ("c512 · chunk_size=512 · 1 document, active in 1", "c512"),
    ]


def test_the_neighbour_inputs_say_what_they_do_for_the_chosen_strategy():
    from frontend.pages.query.query_columns import neighbour_note
    from services.chunker.strategies import REGISTRY

    notes = {name: neighbour_note(REGISTRY.get(name).info()) for name in ("fixed_size", "recursive", "parent_child")}
    assert notes == {
        "fixed_size": "chunks added before and after each hit",
        "recursive": "no effect: recursive returns its hits only",
        "parent_child": "no effect: parent_child returns each hit's parent",
    }
    assert retrieval_html.nothing_indexed("semantic_parent_child", "all-MiniLM-L6-v2") == (
        "0 chunks are indexed for semantic_parent_child with all-MiniLM-L6-v2: process a document with it on the "
        "Documents tab."
    )


# -- the report store ----------------------------------------------------------


def test_the_report_route_serves_only_the_stores_files_sandboxed_and_keeps_the_newest(tmp_path):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from frontend.report_files import ReportFiles

    files = ReportFiles(tmp_path / "reports", kept=2)
    token, folder = files.folder()
    (folder / "r-both.html").write_text("<!DOCTYPE html><p>Stürme</p>", encoding="utf-8")
    browser = TestClient(Starlette(routes=files.routes()))
    page = browser.get("/" + files.url(token, "r-both.html"))
    assert (page.status_code, page.text) == (200, "<!DOCTYPE html><p>Stürme</p>")
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"].startswith("sandbox; default-src 'none'")
    (tmp_path / "secret.html").write_text("not a report")
    for url in (
        files.url(token, "other.html"),
        files.url("0" * 32, "r-both.html"),
        f"chunklab-reports/{token}/r-both.txt",
    ):
        missing = browser.get("/" + url)
        assert missing.status_code == 404 and "open it again from the Reports page" in missing.text, url
    for url in (files.url(token, "..%2F..%2Fsecret.html"), "chunklab-reports/../secret.html"):
        assert browser.get("/" + url).status_code == 404, url
    # Two more reports: the first one's folder goes, the newest two stay.
    newer = [files.folder()[0] for _ in range(2)]
    assert sorted(p.name for p in files.root.iterdir()) == sorted(newer)
    files.discard(newer[0])
    assert [p.name for p in files.root.iterdir()] == [newer[1]]


def test_the_report_store_makes_one_temporary_folder_and_removes_it_when_the_ui_exits(monkeypatch):
    """Every Open writes under one folder, not a new temporary folder each time, and the UI's exit removes it."""
    import atexit
    import shutil

    from frontend.report_files import ReportFiles

    at_exit = []
    monkeypatch.setattr(atexit, "register", lambda *call, **kwargs: at_exit.append((call, kwargs)))
    files = ReportFiles()
    first, second = files.folder()[1], files.folder()[1]
    assert first.parent == second.parent == files.root and files.root.name.startswith("chunklab-ui-reports-")
    assert at_exit == [((shutil.rmtree, files.root), {"ignore_errors": True})]
    shutil.rmtree(files.root)
