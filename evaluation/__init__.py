"""Evaluation: retrieval, reference and answer metrics, reports (a later issue)."""
