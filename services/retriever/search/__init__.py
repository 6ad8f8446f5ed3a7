"""From a query to the chunks it returns: BM25 and its per-set statistics,
fusion, the ranking order, reranking and expansion."""
