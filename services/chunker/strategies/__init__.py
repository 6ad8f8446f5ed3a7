"""Every strategy registers itself on import; this imports them all, in the
order of SPEC section 3 (ListStrategies shows them in this order)."""

# Importing registers a strategy, so this order is ListStrategies' order: not sorted.
# isort: off
from services.chunker.strategies import (  # noqa: F401
    fixed_size,
    recursive,
    semantic,
    sentence_window,
    markdown_structure,
    parent_child,
    semantic_parent_child,
    contextual_retrieval,
    contextual_structure,
    hybrid_semantic_recursive,
    cluster_semantic,
    cluster_parent_child,
)

# isort: on
from services.chunker.strategies.base import REGISTRY, ChunkingContext, SourceDocument, Strategy, offline_context

__all__ = ["REGISTRY", "ChunkingContext", "SourceDocument", "Strategy", "offline_context"]
