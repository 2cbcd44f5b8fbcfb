"""Domain adaptation: QA generated from the corpus (qa_generation) gives the pairs (pairs) that
fine-tune the reranker (reranker) and the retriever (retriever)."""
