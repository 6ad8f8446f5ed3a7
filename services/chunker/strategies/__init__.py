"""Every strategy registers itself on import; this imports them all."""

from services.chunker.strategies import fixed_size  # noqa: F401
from services.chunker.strategies.base import REGISTRY, ChunkingContext, SourceDocument, Strategy, offline_context

__all__ = ["REGISTRY", "ChunkingContext", "SourceDocument", "Strategy", "offline_context"]
