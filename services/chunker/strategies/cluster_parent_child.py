"""cluster_parent_child: small pieces are searched, their similarity clusters
are what the LLM sees (ADR 0052)."""

from __future__ import annotations

from chunklab.v1 import chunker_pb2, common_pb2
from services.chunker.strategies.base import REGISTRY, ChunkingContext, Knob, SourceDocument, Strategy
from services.chunker.strategies.cluster_semantic import clustered
from services.chunker.strategies.families import Family, family_chunks
from services.chunker.strategies.structure import HeadingPaths


@REGISTRY.register
class ClusterParentChild(Strategy):
    name = "cluster_parent_child"
    expansion = common_pb2.EXPANSION_KIND_PARENT
    description = (
        "Small pieces are the searchable children; their parents are the groups cluster_semantic would make "
        "of them, so a hit brings back the passage that belongs with it, and hits in one passage bring it once."
    )
    requires_embeddings_to_chunk = True
    knobs = (
        Knob("child_max_tokens", chunker_pb2.KNOB_TYPE_INT, 50, "Maximum tokens per child piece (the separator cascade cuts the text into pieces this big).", 4, 2048),
        Knob("parent_max_tokens", chunker_pb2.KNOB_TYPE_INT, 200, "Hard maximum tokens per parent (a group of whole children).", 16, 8192),
    )

    def chunk(self, source: SourceDocument, context: ChunkingContext):
        """Children embed sharply (one point each); a child's parent is its
        cluster: the consecutive pieces around it that are more alike than
        the document's average, at most parent_max_tokens."""
        index, pieces, groups = clustered(
            source, context, self.values["child_max_tokens"], self.values["parent_max_tokens"]
        )
        paths = HeadingPaths(source.tree)
        families = [Family(start, end, paths.at(start), pieces[a:b]) for start, end, _, a, b in groups]
        return family_chunks(self, source, index, families)
