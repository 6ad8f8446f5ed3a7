"""Every strategy registers itself on import; this imports them all."""

from services.chunker.strategies import fixed_size  # noqa: F401
from services.chunker.strategies.base import REGISTRY, SourceDocument, Strategy

__all__ = ["REGISTRY", "SourceDocument", "Strategy"]
