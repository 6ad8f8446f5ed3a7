"""The vector index: how a chunk is stored as a point, the filter conditions,
the `VectorIndex` interface and its two backends (Qdrant Edge in-process, a
Qdrant server), which indexes exist, and the HNSW graphs built off the request path."""
