"""What the store tests check: the four stores a writer keeps hold the same documents."""

from __future__ import annotations

from ingestion.integrity import document_hashes, load_docstore
from ingestion.sources import SourceRegistry
from rag.retrieval import lexical_index
from rag.store import chunk_ids, collection


def stores(settings) -> dict[str, dict]:
    """Each store's documents: Chroma's and the lexical index's with their chunk ids."""
    registry = SourceRegistry.load(settings.docstore_dir / "sources.json")
    return {
        "chroma": chunk_ids(collection(settings)),
        "docstore": document_hashes(load_docstore(settings.docstore_dir / "docstore.json")),
        "registry": registry.indexed,
        "lexical": lexical_index(settings).chunk_ids(),
    }


def assert_agree(settings, pending: set[str] = frozenset(), in_flight: int = 0) -> set[str]:
    """All four stores hold the same documents (Chroma and BM25 the same chunks of each),
    except those the journal says are being removed and at most `in_flight` documents a kill
    caught between two stores' writes; returns the documents they agree on."""
    held = stores(settings)
    every = set().union(*held.values())
    agreed = {doc for doc in every if all(doc in store for store in held.values())
              and held["chroma"][doc] == held["lexical"][doc]}
    astray = every - agreed - set(pending)
    assert len(astray) <= in_flight, {name: sorted(astray - set(store))[:5] for name, store in held.items()}
    return agreed
