"""A tuning study's search space (ADR 0113): what each trial may set, read from the chunker's
ListStrategies (every knob's declared range) and the retrieval modes, and the two starting points
(the static recommendation, then the fixed_size baseline).

A trial's parameters are plain values named per strategy ("cluster_parent_child.child_max_tokens"),
so that one strategy's knobs never share a distribution with another's. Token-sized knobs are
searched on a log scale from their sensible minimum up to the token cap (a chunk larger than the
cap alone sends more than the cap: it cannot win); overlap is searched as a share of the chunk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chunklab import knobs, recommended, retrieval
from chunklab.v1 import chunker_pb2, common_pb2, evaluator_pb2

DEFAULT_TOP_K = (3, 4, 5, 6, 8, 10)
DEFAULT_NEIGHBORS = (0, 1, 2)
# Reciprocal rank fusion's k for hybrid trials (ADR 0139): about log-spaced up to the usual 60,
# dense where it is small, since 1 / (k + rank) changes fastest there.
DEFAULT_FUSION_K = (1, 2, 3, 5, 10, 20, 60)
# Token knobs' upper end when no token cap is set.
UNCAPPED_TOKENS = 2048
# Small integer knobs (sentences, pieces, windows) are searched up to this far above their floor.
SMALL_INT_SPAN = 5
OVERLAP_SHARE = "overlap_share"


@dataclass(frozen=True)
class Candidate:
    """One configuration a trial tries: a strategy's knob values and its retrieval options."""

    strategy: str
    values: dict[str, Any]  # every knob of the strategy, resolved
    top_k: int
    hybrid: bool
    neighbors: int = 0
    rerank: bool = False
    fusion_k: int = retrieval.LIMITS.default_fusion_k  # hybrid only

    @property
    def run_key(self) -> str:
        knob_part = ",".join(f"{k}={knobs.label(v)}" for k, v in self.values.items())
        modes = [f"top_k={self.top_k}", "hybrid" if self.hybrid else "dense"]
        if self.hybrid and self.fusion_k != retrieval.LIMITS.default_fusion_k:
            modes.append(f"fusion_k={self.fusion_k}")
        if self.neighbors:
            modes.append(f"neighbors={self.neighbors}")
        if self.rerank:
            modes.append("rerank")
        return f"{self.strategy}[{knob_part}]+{','.join(modes)}"


@dataclass
class Space:
    """The strategies a study searches (by their StrategyInfo) and its retrieval choices."""

    infos: dict[str, chunker_pb2.StrategyInfo]
    top_k: tuple[int, ...]
    hybrid: tuple[bool, ...]
    neighbors: tuple[int, ...]
    token_cap: int
    # The configured reranker's kind (RerankerKind), 0 when the search does not try one.
    rerank: int = 0
    # Hybrid trials' fusion_k values (the default always among them).
    fusion_k: tuple[int, ...] = (retrieval.LIMITS.default_fusion_k,)
    # Strategies left out, each with why.
    notes: list[str] = field(default_factory=list)

    def strategies(self) -> list[str]:
        return list(self.infos)

    def knob_params(self, strategy: str) -> list[tuple[str, knobs.Knob]]:
        """(parameter name, knob) for each knob the search sets."""
        return [(f"{strategy}.{k.name}", k) for k in knobs.from_info(self.infos[strategy])]


def build(
    study: evaluator_pb2.Study, infos: Sequence[chunker_pb2.StrategyInfo], llm_configured: bool, reranker: int
) -> Space:
    """The space a study's request names, defaults filled in. Strategies that need an LLM are left
    out (with the reason) when none is configured; unknown names are refused by the caller's check."""
    by_name = {i.name: i for i in infos}
    wanted = list(study.space.strategies) or [i.name for i in infos]
    chosen: dict[str, chunker_pb2.StrategyInfo] = {}
    notes: list[str] = []
    for name in wanted:
        info = by_name[name]
        if info.requires_llm and not llm_configured:
            notes.append(f"{name} left out: it needs an LLM and the chunker has none configured (CHUNKLAB_LLM_*)")
            continue
        chosen[name] = info
    if study.space.rerank and not reranker:
        notes.append("the reranker left out: the retriever has none configured (CHUNKLAB_RERANK_*)")
    return Space(
        infos=chosen,
        top_k=tuple(sorted(set(study.space.top_k or DEFAULT_TOP_K) | {retrieval.LIMITS.default_top_k})),
        hybrid=tuple(dict.fromkeys(study.space.hybrid)) or (False, True),
        neighbors=tuple(sorted(set(study.space.neighbors or DEFAULT_NEIGHBORS))),
        token_cap=study.objective.max_tokens,
        rerank=reranker if study.space.rerank else 0,
        fusion_k=tuple(sorted(set(study.space.fusion_k or DEFAULT_FUSION_K) | {retrieval.LIMITS.default_fusion_k})),
        notes=notes,
    )


def token_knob(knob: knobs.Knob) -> bool:
    return knob.type == knobs.INT and knob.unit == "tokens" and knob.name != "chunk_overlap"


def int_range(knob: knobs.Knob, cap: int) -> tuple[int, int, bool]:
    """(low, high, log) for an integer knob; the default always lies inside."""
    low = int(knob.min_value if knob.min_value is not None else 0)
    high = int(knob.max_value if knob.max_value is not None else low + SMALL_INT_SPAN)
    if token_knob(knob):
        low = max(low, int(knob.sensible_min or low))
        high = min(high, cap or UNCAPPED_TOKENS)
        log = low > 0
    else:
        high = min(high, low + SMALL_INT_SPAN)
        log = False
    default = int(knob.default)
    return min(low, default), max(high, default, low + 1), log


def suggest(trial, space: Space) -> Candidate:
    """The configuration an Optuna trial asks for (define-by-run: each strategy its own knobs)."""
    strategy = trial.suggest_categorical("strategy", space.strategies())
    chosen: dict[str, Any] = {}
    for param, knob in space.knob_params(strategy):
        if knob.name == "chunk_overlap":
            continue  # set from its share of the chunk below
        if knob.kind == "int":
            low, high, log = int_range(knob, space.token_cap)
            chosen[knob.name] = trial.suggest_int(param, low, high, log=log)
        elif knob.kind == "double":
            low = knob.min_value if knob.min_value is not None else 0.0
            high = knob.max_value if knob.max_value is not None else 1.0
            chosen[knob.name] = trial.suggest_float(param, low, high)
        elif knob.kind == "choice":
            chosen[knob.name] = trial.suggest_categorical(param, list(knob.choices))
        elif knob.kind == "bool":
            chosen[knob.name] = trial.suggest_categorical(param, [False, True])
    declared = knobs.from_info(space.infos[strategy])
    if any(k.name == "chunk_overlap" for k in declared) and "chunk_size" in chosen:
        share = trial.suggest_float(f"{strategy}.{OVERLAP_SHARE}", 0.0, 0.5)
        chosen["chunk_overlap"] = int(share * chosen["chunk_size"])
    top_k = trial.suggest_categorical("top_k", list(space.top_k))
    hybrid = trial.suggest_categorical("hybrid", list(space.hybrid))
    return Candidate(
        strategy=strategy,
        values=resolve(strategy, declared, chosen),
        top_k=top_k,
        hybrid=hybrid,
        neighbors=_neighbors(trial, space, strategy),
        rerank=trial.suggest_categorical("rerank", [False, True]) if space.rerank else False,
        fusion_k=_fusion_k(trial, space, hybrid),
    )


def _fusion_k(trial, space: Space, hybrid: bool) -> int:
    if not hybrid:
        return retrieval.LIMITS.default_fusion_k
    return trial.suggest_categorical("fusion_k", list(space.fusion_k))


def _neighbors(trial, space: Space, strategy: str) -> int:
    if space.infos[strategy].expansion != common_pb2.EXPANSION_KIND_NEIGHBORS:
        return 0
    return trial.suggest_categorical("neighbors", list(space.neighbors))


def resolve(strategy: str, declared: Sequence[knobs.Knob], chosen: Mapping[str, Any]) -> dict[str, Any]:
    """Every knob's value with the rules between knobs kept: a value that breaks a rule (a child
    larger than its parent) is brought to its limit rather than wasting the trial."""
    values = {k.name: chosen.get(k.name, k.default) for k in declared}
    for rule in knobs.RULES:
        if rule.knob in values and rule.limit in values:
            limit = values[rule.limit]
            ceiling = limit - 1 if rule.strict and isinstance(limit, int) else limit
            if values[rule.knob] > ceiling or (rule.strict and values[rule.knob] >= limit):
                values[rule.knob] = ceiling
    return knobs.resolve(strategy, declared, values)


def starting_points(space: Space) -> list[tuple[str, dict[str, Any]]]:
    """("recommendation" | "baseline", Optuna parameters) for the static recommendation and the
    fixed_size baseline at their defaults, each where the space holds its strategy."""
    points = []
    for origin, strategy, hybrid in (
        ("recommendation", recommended.STRATEGIES[0], recommended.HYBRID),
        ("baseline", recommended.BASELINE, False),
    ):
        if strategy not in space.infos or hybrid not in space.hybrid:
            continue
        params: dict[str, Any] = {"strategy": strategy, "top_k": retrieval.LIMITS.default_top_k, "hybrid": hybrid}
        if hybrid:
            params["fusion_k"] = retrieval.LIMITS.default_fusion_k
        declared = {k.name: k for k in knobs.from_info(space.infos[strategy])}
        for param, knob in space.knob_params(strategy):
            if knob.name != "chunk_overlap":
                params[param] = knob.default
        if "chunk_overlap" in declared and "chunk_size" in declared:
            params[f"{strategy}.{OVERLAP_SHARE}"] = declared["chunk_overlap"].default / declared["chunk_size"].default
        if space.infos[strategy].expansion == common_pb2.EXPANSION_KIND_NEIGHBORS:
            params["neighbors"] = 0
        if space.rerank:
            params["rerank"] = False
        points.append((origin, params))
    return points


def params_json(params: Mapping[str, Any]) -> str:
    return json.dumps(dict(params), sort_keys=True)


def retrieval_options(
    candidate: Candidate, base: common_pb2.RetrievalOptions, rerank_kind: int = 0
) -> common_pb2.RetrievalOptions:
    """The study's retrieval options with the candidate's modes set (strategy and config_id are the run's)."""
    options = common_pb2.RetrievalOptions()
    options.CopyFrom(base)
    options.top_k = candidate.top_k
    options.hybrid = candidate.hybrid
    options.neighbor_prev = options.neighbor_next = candidate.neighbors
    if candidate.hybrid and candidate.fusion_k != retrieval.LIMITS.default_fusion_k:
        options.fusion_k = candidate.fusion_k
    else:
        options.ClearField("fusion_k")
    if candidate.rerank:
        options.rerank.kind = rerank_kind
    else:
        options.ClearField("rerank")
    return options
