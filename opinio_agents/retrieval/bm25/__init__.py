"""BM25 retrieval: App. D tokenization, Okapi scoring, positive top-K selection."""
