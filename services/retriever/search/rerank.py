"""The reranking stage (ADR 0055): a query's first candidates scored again by a
reranker and reordered, before top_k are kept and expanded.

Four kinds (RerankerKind): a sentence-transformers CrossEncoder loaded from a
folder on this machine (never downloaded), an HTTP rerank endpoint in the
Cohere/Jina shape, TEI's /rerank, and the chat LLM asked to score every
candidate in one reply. Each gives one score per passage, in the passages'
order; `reorder` sorts by it, ties kept in the retrieval order (ranking.py's).

A reranker that cannot be had from the settings and the options (nothing
configured, a folder that is not there) is FAILED_PRECONDITION, before any
search; one that fails while it reranks (down, too slow, an answer that is no
ranking) is UNAVAILABLE: the query is never answered silently un-reranked.
Knows nothing of gRPC.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import httpx

from chunklab.endpoints import OPEN, EndpointPolicy
from chunklab.errors import FailedPrecondition, Unavailable, logged
from chunklab.llm import ChatClient, ChatEndpoint, LLMError, status_meaning
from chunklab.llm_json import complete_json
from chunklab.rpc.limits import excerpt
from chunklab.settings import Settings
from chunklab.v1 import common_pb2 as pb
from services.retriever.index.payloads import payload_to_chunk
from services.retriever.search import ranking

log = logging.getLogger(__name__)

# Characters of a passage a reranker is sent: endpoints and cross-encoders cut
# by tokens themselves; this bounds the request (the LLM's prompt: LLM_PASSAGE_CHARS).
PASSAGE_CHARS = 8_000
LLM_PASSAGE_CHARS = 1_500
# Texts in one request to TEI (its default --max-client-batch-size).
TEI_BATCH = 32
# Cross-encoders kept loaded, the least recently used dropped first.
LOADED_CROSS_ENCODERS = 2
NOT_RERANKED = "the query was not reranked: try again, or search without reranking"


class Reranker(Protocol):
    description: str  # RetrieveResponse.reranker, e.g. "rerank-v3.5 at https://host/v2/rerank"

    def scores(self, query: str, passages: list[str]) -> list[float]:
        """One score per passage, in the passages' order; higher is more relevant."""


@dataclass(frozen=True)
class RerankConfig:
    """The retriever's configured defaults (CHUNKLAB_RERANK_*, CHUNKLAB_LLM_*)."""

    url: str = ""
    api_key: str = ""
    model: str = ""
    cross_encoder: str = ""
    timeout_s: float = 30.0
    llm: ChatEndpoint = ChatEndpoint("", "", "")
    # The hosts a query may name in rerank.base_url (CHUNKLAB_ALLOWED_ENDPOINTS, ADR 0126).
    policy: EndpointPolicy = OPEN

    @classmethod
    def from_settings(cls, settings: Settings) -> RerankConfig:
        return cls(
            url=settings.rerank_url,
            api_key=settings.rerank_api_key,
            model=settings.rerank_model,
            cross_encoder=settings.rerank_cross_encoder,
            timeout_s=settings.rerank_timeout_s,
            llm=ChatEndpoint(
                settings.llm_base_url,
                settings.llm_api_key,
                settings.llm_model,
                settings.llm_timeout_s,
                settings.llm_max_retries,
                settings.llm_structured_output,
            ),
            policy=EndpointPolicy.from_settings(settings),
        )


def reorder(scores: list[float], top_k: int) -> list[int]:
    """Which candidates are kept, best first: the first top_k by rerank score, compared
    at ranking.SCORE_DIGITS decimals; tied ones keep their retrieval order (itself
    ranking.py's documented order), so an LLM's 0-10 ties fall back to the search."""
    return sorted(range(len(scores)), key=lambda i: (-round(scores[i], ranking.SCORE_DIGITS), i))[:top_k]


def rerank(
    reranker: Reranker, query: str, candidates: list[tuple[dict, float]], top_k: int
) -> tuple[list[tuple[pb.Chunk, float]], dict[str, float]]:
    """The hits (chunk, retrieval score) the reranker keeps of the candidates, and
    their rerank scores by chunk id. A chunk is judged by the text it was searched
    by (enriched_content where set)."""
    if not candidates:
        return [], {}
    chunks = [payload_to_chunk(payload) for payload, _ in candidates]
    scores = reranker.scores(
        query, [c.enriched_content if c.HasField("enriched_content") else c.content for c in chunks]
    )
    kept = reorder(scores, top_k)
    return [(chunks[i], candidates[i][1]) for i in kept], {chunks[i].chunk_id: scores[i] for i in kept}


def stamp(retrieved: Iterable[pb.RetrievedChunk], tree: pb.ExpansionTree, scores: dict[str, float]) -> None:
    """Writes each hit's rerank score beside its retrieval score, in the flat list and the tree."""
    for item in [*retrieved, *(node.hit for node in tree.hits)]:
        if item.label == pb.CHUNK_LABEL_HIT and item.chunk.chunk_id in scores:
            item.rerank_score = scores[item.chunk.chunk_id]


class Rerankers:
    """The reranker a query's RerankOptions name, over the configured defaults;
    cross-encoders stay loaded between queries."""

    def __init__(self, config: RerankConfig | None = None) -> None:
        self.config = config or RerankConfig()
        self._loaded: OrderedDict[Path, CrossEncoderReranker] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, options: pb.RerankOptions) -> Reranker:
        kind = options.kind
        self.config.policy.check(options.base_url, "rerank.base_url")
        if kind == pb.RERANKER_KIND_CROSS_ENCODER:
            return self._cross_encoder(options.model or self.config.cross_encoder)
        if kind in (pb.RERANKER_KIND_HTTP, pb.RERANKER_KIND_TEI):
            url = options.base_url or self.config.url
            if not url:
                raise FailedPrecondition(
                    "no rerank endpoint is configured: set CHUNKLAB_RERANK_URL on the retriever, "
                    "or name one in rerank.base_url"
                )
            key = self.config.api_key if url == self.config.url else ""  # the configured key stays with its URL
            return HttpReranker(
                url, options.model or self.config.model, key, self.config.timeout_s, tei=kind == pb.RERANKER_KIND_TEI
            )
        if kind == pb.RERANKER_KIND_LLM:
            base = self.config.llm
            endpoint = replace(
                base,
                base_url=options.base_url or base.base_url,
                model=options.model or base.model,
                api_key=base.api_key if options.base_url in ("", base.base_url) else "",
            )
            if not endpoint.configured:
                raise FailedPrecondition(
                    "no LLM is configured to rerank with: set CHUNKLAB_LLM_BASE_URL and "
                    "CHUNKLAB_LLM_MODEL on the retriever, or name one in rerank.base_url"
                )
            return LlmReranker(endpoint)
        raise FailedPrecondition(f"rerank.kind {kind} names no reranker this retriever has")

    def _cross_encoder(self, name: str) -> CrossEncoderReranker:
        if not name:
            raise FailedPrecondition(
                "name the cross-encoder's folder in rerank.model, or set CHUNKLAB_RERANK_CROSS_ENCODER on the retriever"
            )
        folder = Path(name).expanduser().resolve()
        if not folder.is_dir():
            raise FailedPrecondition(
                f"the cross-encoder folder {excerpt(name)!r} is not a folder on the retriever's machine; name the "
                "folder a sentence-transformers CrossEncoder was saved to (models are never downloaded)"
            )
        if not (folder / "config.json").is_file():
            raise FailedPrecondition(
                f"the folder {excerpt(name)!r} holds no config.json: it is not a saved "
                "sentence-transformers CrossEncoder"
            )
        with self._lock:  # one load per folder, however many queries ask at once
            reranker = self._loaded.get(folder)
            if reranker is None:
                reranker = CrossEncoderReranker(folder)
                self._loaded[folder] = reranker
                while len(self._loaded) > LOADED_CROSS_ENCODERS:
                    self._loaded.popitem(last=False)
            self._loaded.move_to_end(folder)
            return reranker


class CrossEncoderReranker:
    def __init__(self, folder: Path) -> None:
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(str(folder), device="cpu", local_files_only=True)
        except Exception:  # whatever the folder holds, the user is told what failed
            incident = logged(log, f"the folder {folder} could not be loaded as a CrossEncoder")
            raise FailedPrecondition(
                f"the folder {excerpt(str(folder))!r} could not be loaded as a "
                f"sentence-transformers CrossEncoder (incident {incident}; the retriever log "
                "says why): check that it holds a cross-encoder's files"
            ) from None
        labels = self._model.config.num_labels
        if labels != 1:
            raise FailedPrecondition(
                f"the cross-encoder in {excerpt(str(folder))!r} gives {labels} scores per "
                "pair; a reranker needs a model with one (num_labels=1)"
            )
        self.description = f"cross-encoder {folder}"
        self._lock = threading.Lock()  # a fast tokenizer refuses to be used by two threads at once

    def scores(self, query: str, passages: list[str]) -> list[float]:
        with self._lock:
            found = self._model.predict([(query, p[:PASSAGE_CHARS]) for p in passages], show_progress_bar=False)
        return [float(s) for s in found]


class HttpReranker:
    """POST {model, query, documents, top_n} (Cohere, Jina, vLLM, Infinity), or with
    `tei`, {query, texts, truncate} (TEI). Either reply shape is read."""

    def __init__(self, url: str, model: str, api_key: str, timeout_s: float, *, tei: bool) -> None:
        self.url, self.model, self._key, self.timeout_s, self.tei = url, model, api_key, timeout_s, tei
        self.description = f"{model or 'the model it serves'} at {url}" + (" (TEI)" if tei else "")

    def scores(self, query: str, passages: list[str]) -> list[float]:
        texts = [p[:PASSAGE_CHARS] for p in passages]
        if not self.tei:
            return self._post(
                {
                    "query": query,
                    "documents": texts,
                    "top_n": len(texts),
                    **({"model": self.model} if self.model else {}),
                },
                len(texts),
            )
        # TEI refuses more texts than its --max-client-batch-size (32 by default) in one
        # request; its scores are per pair, so batches are scored alike.
        scores: list[float] = []
        for start in range(0, len(texts), TEI_BATCH):
            batch = texts[start : start + TEI_BATCH]
            scores += self._post({"query": query, "texts": batch, "truncate": True}, len(batch))
        return scores

    def _post(self, body: dict, count: int) -> list[float]:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        where = f"the reranker at {self.url}"
        try:
            reply = httpx.post(self.url, json=body, headers=headers, timeout=self.timeout_s)
        except httpx.TimeoutException:
            raise Unavailable(f"{where} did not answer within {self.timeout_s:g}s; {NOT_RERANKED}") from None
        except httpx.HTTPError as exc:
            log.warning("%s is unreachable: %s: %s", where, type(exc).__name__, excerpt(exc, 500))
            said = (
                "it refused the connection or is not running"
                if isinstance(exc, httpx.ConnectError)
                else "the connection failed"
            )
            raise Unavailable(f"{where} is unreachable ({said}); {NOT_RERANKED}") from None
        if reply.status_code >= 400:
            log.warning("%s answered HTTP %d: %s", where, reply.status_code, excerpt(reply.text, 2000))
            raise Unavailable(
                f"{where} answered HTTP {reply.status_code} ({status_meaning(reply.status_code)}; its "
                f"reply is in the retriever log); {NOT_RERANKED}"
            )
        try:
            data = reply.json()
            items = data["results"] if isinstance(data, dict) else data
            return in_order([(item["index"], item.get("relevance_score", item.get("score"))) for item in items], count)
        except Unscorable as exc:
            log.warning("%s gave unusable scores: %s", where, excerpt(reply.text, 2000))
            raise Unavailable(f"{where} gave an unusable reply ({exc.args[0]}); {NOT_RERANKED}") from None
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("%s gave an unusable reply: %s", where, excerpt(reply.text, 2000))
            raise Unavailable(
                f"{where} gave an unusable reply (not JSON results with an index and a score per "
                f"passage; the reply is in the retriever log); {NOT_RERANKED}"
            ) from None


class Unscorable(ValueError):
    """A reply's scores are not one finite number per passage sent; the message says
    what is wrong, in our words (it quotes at most an index or a score, in excerpt)."""


def in_order(found: Iterable[tuple[object, object]], count: int) -> list[float]:
    """Scores by passage from (index, score) pairs, which must score each of `count`
    passages once with a finite number (Unscorable saying what is wrong otherwise)."""
    scores: dict[int, float] = {}
    for index, score in found:
        if isinstance(index, bool) or not isinstance(index, int | str) or not str(index).strip().isdigit():
            raise Unscorable(f"index {excerpt(repr(index), 40)} is not a passage number")
        try:
            number = float(score)  # a number, or a number written as text
        except (TypeError, ValueError):
            raise Unscorable(f"passage {index} has no numeric score ({excerpt(repr(score), 40)})") from None
        if not math.isfinite(number):
            raise Unscorable(f"passage {index} has score {score!r}")
        scores[int(index)] = number
    missing = sorted(set(range(count)) - set(scores))
    if missing or len(scores) != count:
        extra = sorted(set(scores) - set(range(count)))
        raise Unscorable(
            f"{count} passages were sent; "
            + (f"no score for {missing[:10]}" if missing else f"scores for passages never sent: {extra[:10]}")
        )
    return [scores[i] for i in range(count)]


LLM_INSTRUCTIONS = (
    "You judge how relevant passages are to a search query. Score every passage from 0 (unrelated) to 10 "
    "(answers the query directly). Reply with JSON only, one entry per passage: "
    '{"scores": [{"index": 0, "score": 7}, {"index": 1, "score": 2}]}'
)


def llm_schema(count: int) -> dict:
    """The reply's shape, asked for through response_format where the endpoint takes it (ADR 0136):
    exactly one score 0..10 per passage, in the passages' order (llm_scores reads it), so a
    grammar-constrained model can neither skip a passage nor invent one."""
    scores = {"type": "array", "items": {"type": "integer", "enum": list(range(11))}, "minItems": count}
    return {
        "type": "object",
        "properties": {"scores": {**scores, "maxItems": count}},
        "required": ["scores"],
        "additionalProperties": False,
    }


def llm_max_tokens(count: int) -> int:
    """Tokens the reply may take: about a dozen per {"index": i, "score": s} entry, and room around them."""
    return 64 + 16 * count


def llm_messages(query: str, passages: list[str]) -> list[dict]:
    listed = "\n\n".join(f"[{i}] {' '.join(p[:LLM_PASSAGE_CHARS].split())}" for i, p in enumerate(passages))
    return [
        {"role": "system", "content": LLM_INSTRUCTIONS},
        {"role": "user", "content": f"Query: {query}\n\nPassages:\n{listed}"},
    ]


class LlmReranker:
    """Listwise: one chat call scores every candidate, as JSON read defensively (`llm_scores`)."""

    def __init__(self, endpoint: ChatEndpoint) -> None:
        self.endpoint = endpoint
        self.description = f"LLM {endpoint.describe()}"

    def scores(self, query: str, passages: list[str]) -> list[float]:
        messages = llm_messages(query, passages)
        where = f"the LLM reranker ({self.endpoint.describe()})"
        try:
            reply = complete_json(
                ChatClient(self.endpoint),
                messages,
                name="rerank_scores",
                schema=llm_schema(len(passages)),
                max_tokens=llm_max_tokens(len(passages)),
            ).result.text
        except LLMError as exc:
            raise Unavailable(f"{exc}; {NOT_RERANKED}") from None
        try:
            return llm_scores(reply, len(passages))
        except Unscorable as exc:
            log.warning("%s gave no usable scores: %s", where, excerpt(reply, 2000))
            raise Unavailable(
                f"{where} gave no usable scores ({exc.args[0]}; its reply is in the retriever log); {NOT_RERANKED}"
            ) from None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def llm_scores(reply: str, count: int) -> list[float]:
    """Scores from an LLM's reply: the first JSON value in it (inside a code fence or
    amid prose), as {"scores": [...]} or a bare list, of {"index", "score"} objects
    or of numbers in passage order, or an {"index": score} object."""
    text = (_FENCE.search(reply) or re.match(r"(.*)", reply, re.DOTALL)).group(1)
    value = _first_json(text)
    if isinstance(value, dict) and "scores" in value:
        value = value["scores"]
    if isinstance(value, dict):
        return in_order(value.items(), count)
    if not isinstance(value, list):
        raise Unscorable("the reply holds no list of scores")
    if all(isinstance(item, dict) for item in value):
        try:
            return in_order(((item["index"], item["score"]) for item in value), count)
        except KeyError:
            raise Unscorable("an entry has no 'index' or no 'score'") from None
    return in_order(enumerate(value), count)


def _first_json(text: str):
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            return decoder.raw_decode(text, match.start())[0]
        except ValueError:
            continue  # not JSON from this bracket on: the next one is tried; none at all is said below
    raise Unscorable("the reply holds no JSON")
