"""HNSW graphs for the embedded index, built off the request path (ADR 0035).

Exact search over a shard costs time in proportion to its points (about
2 ms at 20,000 and 8 ms at 100,000 here); an HNSW graph answers in a
fraction of a millisecond. Qdrant Edge builds the graph only when asked
(`EdgeShard.optimize()`), and holds the GIL while it does, for seconds to
minutes. So:

- `GraphKeeper`, a thread of the retriever, looks at each Edge shard now and
  then. A shard with at least `min_points` points, written since its last
  graph, and left alone for `idle_s` seconds (a bulk load is over) gets a
  new graph: `EdgeIndex.rebuild_graph` copies it, has this module's `main`
  build the graph in another process, and swaps the copy in unless a write
  came in meanwhile (then the next look tries again).
- Points written after the graph was built are searched exactly, beside it,
  until the next build. Searches filtered to a few documents stay exact:
  Qdrant scans the points the payload index selects when they are fewer
  than the graph's full-scan threshold.

    python -m services.retriever.index.graph <shard copy folder> <dimension>
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

from services.retriever.index.edge import EdgeIndex, GraphBuildFailed, shard_config, write_marker
from services.retriever.index.registry import IndexRegistry
from services.retriever.lifecycle.periodic import Periodic

log = logging.getLogger("chunklab.retriever.graph")

# After a failed build, the same shard (unchanged) is tried again only this much later.
RETRY_AFTER_FAILURE_S = 600.0


class GraphKeeper:
    """Builds each Edge shard's HNSW graph when it is big enough, changed and idle."""

    def __init__(self, registry: IndexRegistry, min_points: int, idle_s: float, clock=time.monotonic) -> None:
        self.registry = registry
        self.min_points = min_points
        self.idle_s = idle_s
        self._clock = clock
        # Per shard: the generation last seen and since when it has not changed.
        self._seen: dict[str, tuple[int, float]] = {}
        # Per shard: the generation whose build failed, and when.
        self._failed: dict[str, tuple[int, float]] = {}
        self._periodic = Periodic("HNSW graph upkeep", self.run_once, log)

    def due(self) -> list[tuple[str, EdgeIndex]]:
        """The shards whose graph should be built now."""
        now = self._clock()
        ready = []
        for name, _, index in self.registry.all():
            if not isinstance(index, EdgeIndex):
                continue  # a Qdrant server builds its own graphs
            generation = index.generation
            seen = self._seen.get(name)
            if seen is None or seen[0] != generation:
                self._seen[name] = seen = (generation, now)
            failed = self._failed.get(name)
            if failed is not None and failed[0] == generation and now - failed[1] < RETRY_AFTER_FAILURE_S:
                continue
            if not index.graph_current and now - seen[1] >= self.idle_s and index.count() >= self.min_points:
                ready.append((name, index))
        return ready

    def run_once(self) -> int:
        """Builds every graph that is due; returns how many were swapped in."""
        built = 0
        for name, index in self.due():
            started, generation = time.perf_counter(), index.generation
            try:
                swapped = index.rebuild_graph(self._periodic.stopping)
            except GraphBuildFailed as exc:
                self._failed[name] = (generation, self._clock())
                log.warning(
                    "%s; searches stay exact, the next try in %.0f minutes or after the next write",
                    exc,
                    RETRY_AFTER_FAILURE_S / 60,
                )
                continue
            if swapped:
                built += 1
                log.info(
                    "HNSW graph of %s built over %d points in %.1fs", name, index.count(), time.perf_counter() - started
                )
            elif not self._periodic.stopping.is_set():
                log.info("HNSW graph of %s set aside: the shard was written meanwhile", name)
        return built

    def start(self) -> None:
        """Looks every idle_s / 2 seconds (at least 1); min_points 0 turns it off."""
        if self.min_points > 0:
            self._periodic.start(max(1.0, self.idle_s / 2))

    def stop(self) -> None:
        self._periodic.stop()


def main(argv: list[str]) -> None:
    """Builds the HNSW graph of the shard copy at argv[0] (dimension argv[1])."""
    from qdrant_edge import EdgeShard

    folder, dimension = Path(argv[0]), int(argv[1])
    shard = EdgeShard.load(str(folder), shard_config(dimension, build_graph=True))
    try:
        shard.optimize()
        shard.flush()
        points = shard.info().points_count
    finally:
        shard.close()
    write_marker(folder, built_at=time.time(), points=points, current=True)


if __name__ == "__main__":
    main(sys.argv[1:])
