"""ChunkLab's shared core: contracts (chunklab.v1), settings, gRPC plumbing,
tokenizer and embeddings. It imports no service."""
