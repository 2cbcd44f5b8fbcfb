"""Domain adaptation: fine-tuning the reranker and retriever (a later issue)."""
