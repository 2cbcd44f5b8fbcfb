"""What the store tests check: the four stores a writer keeps hold the same documents."""

from __future__ import annotations

from rag.store import Store, chunk_ids


def stores(settings) -> dict[str, dict]:
    """Each store's documents: Chroma's and the lexical index's with their chunk ids."""
    store = Store(settings)
    return {
        "chroma": chunk_ids(store.collection),
        "docstore": store.hashes(),
        "registry": store.registry().indexed,
        "lexical": store.lexical.chunk_ids(),
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
