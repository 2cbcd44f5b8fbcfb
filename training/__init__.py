"""Domain adaptation: QA generated from the corpus (qa_generation) trains the reranker (reranker)."""
