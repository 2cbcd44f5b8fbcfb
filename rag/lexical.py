"""The lexical (BM25) channel: an SQLite FTS5 index beside the vector store, updated a document
at a time.

Texts are tokenised as bm25s tokenises them for LlamaIndex's BM25Retriever (the English
Snowball stemmer, English stop words, words of two or more letters, Hangul words whole) and the
tokens are stored; FTS5 ranks them by BM25 (k1 = 1.2, b = 0.75). Adding, changing or deleting a
document touches only its rows, in one transaction, so a crash mid-update leaves the index as it
was before that document; `sync` then brings it level with the docstore by content hash: the
documents whose hash the index does not hold, and only those, are read from Chroma again.
Readers (the UI, evaluation) see each committed document at once (WAL mode): nothing to reload.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import bm25s
import Stemmer
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilters
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

LEXICAL_FILE = "lexical.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (doc TEXT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, node_id TEXT UNIQUE NOT NULL, doc TEXT NOT NULL, meta TEXT NOT NULL, text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc);
CREATE VIRTUAL TABLE IF NOT EXISTS terms USING fts5 (tokens, tokenize = "unicode61 tokenchars '_'");
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokens(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's tokens, as LlamaIndex's BM25Retriever makes them for the index and the query."""
    return bm25s.tokenize(list(texts), stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False)


def _match(query: str) -> str | None:
    """An FTS5 query for any of the query's tokens (quoted: FTS5 reads bare AND, OR, NOT)."""
    words = dict.fromkeys(tokens([query])[0])
    return " OR ".join(f'"{word}"' for word in words) or None


def _where(filters: MetadataFilters | None) -> tuple[str, list[Any]]:
    """The SQL conditions of metadata filters as retrieval makes them (rag.retrieval.metadata_filters):
    all of them, each a field equal to a value or among values."""
    if filters is None:
        return "", []
    clauses, values = [], []
    for condition in filters.filters:
        field = f"json_extract(c.meta, '$.\"{condition.key.replace(chr(34), '')}\"')"
        if condition.operator == FilterOperator.IN:
            clauses.append(f"{field} IN ({', '.join('?' * len(condition.value))})")
            values += list(condition.value)
        elif condition.operator == FilterOperator.EQ:
            clauses.append(f"{field} = ?")
            values.append(condition.value)
        else:
            raise ValueError(f"the lexical index does not filter by {condition.operator}")
    return "".join(f" AND {clause}" for clause in clauses), values


class LexicalIndex:
    """The FTS5 index of one store (`storage_dir/lexical.sqlite`)."""

    def __init__(self, path: Path):
        self.path = path

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=30)) as connection:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.executescript(_SCHEMA)
            yield connection

    def exists(self) -> bool:
        return self.path.is_file()

    def hashes(self) -> dict[str, str]:
        """Document id -> the content hash its indexed chunks were read at."""
        with self._connection() as db:
            return dict(db.execute("SELECT doc, hash FROM documents"))

    def version(self) -> int:
        """A number that grows with every change: readers tell a changed index by it."""
        with self._connection() as db:
            row = db.execute("SELECT value FROM state WHERE key = 'version'").fetchone()
            return row[0] if row else 0

    def count(self) -> int:
        with self._connection() as db:
            return db.execute("SELECT count(*) FROM chunks").fetchone()[0]

    def put(self, doc: str, content_hash: str, nodes: Sequence[BaseNode]) -> None:
        """Index `doc` as these chunks (replacing what it had), all or nothing."""
        # Scored as embedded (header prefix included), stored as Chroma stores it.
        embedded = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
        rows = [
            (node.node_id, doc, json.dumps(node_to_metadata_dict(node, remove_text=True), ensure_ascii=False),
             node.get_content(metadata_mode=MetadataMode.NONE), " ".join(words))
            for node, words in zip(nodes, tokens(embedded) if embedded else [])
        ]
        with self._connection() as db, db:
            self._delete(db, doc)
            for node_id, doc_id, meta, text, words in rows:
                row = db.execute("INSERT INTO chunks (node_id, doc, meta, text) VALUES (?, ?, ?, ?)",
                                 (node_id, doc_id, meta, text)).lastrowid
                db.execute("INSERT INTO terms (rowid, tokens) VALUES (?, ?)", (row, words))
            db.execute("INSERT OR REPLACE INTO documents (doc, hash) VALUES (?, ?)", (doc, content_hash))
            self._bump(db)

    def delete(self, doc: str) -> None:
        with self._connection() as db, db:
            self._delete(db, doc)
            self._bump(db)

    @staticmethod
    def _delete(db: sqlite3.Connection, doc: str) -> None:
        db.execute("DELETE FROM terms WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)", (doc,))
        db.execute("DELETE FROM chunks WHERE doc = ?", (doc,))
        db.execute("DELETE FROM documents WHERE doc = ?", (doc,))

    @staticmethod
    def _bump(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO state (key, value) VALUES ('version', 1) "
                   "ON CONFLICT (key) DO UPDATE SET value = value + 1")

    def search(self, query: str, top_n: int, filters: MetadataFilters | None = None) -> list[NodeWithScore]:
        """The `top_n` chunks of highest BM25 score (> 0) that pass the filters."""
        match = _match(query)
        if match is None:
            return []
        where, values = _where(filters)
        with self._connection() as db:
            rows = db.execute(
                "SELECT c.meta, c.text, -bm25(terms) AS score FROM terms JOIN chunks c ON c.id = terms.rowid "
                f"WHERE terms MATCH ?{where} ORDER BY score DESC LIMIT ?", [match, *values, top_n],
            ).fetchall()
        return [NodeWithScore(node=metadata_dict_to_node(json.loads(meta), text=text), score=score)
                for meta, text, score in rows if score > 0]

    def scores(self, query: str, node_ids: Sequence[str]) -> list[float]:
        """BM25 scores of these chunks for the query (0 for a chunk without a query word)."""
        match = _match(query)
        if match is None or not node_ids:
            return [0.0] * len(node_ids)
        with self._connection() as db:
            found = dict(db.execute(
                "SELECT c.node_id, -bm25(terms) FROM terms JOIN chunks c ON c.id = terms.rowid "
                f"WHERE terms MATCH ? AND c.node_id IN ({', '.join('?' * len(node_ids))})", [match, *node_ids],
            ))
        return [max(float(found.get(node_id, 0.0)), 0.0) for node_id in node_ids]

    def sync(self, wanted: Mapping[str, str], chunks_of) -> int:
        """Bring the index level with the docstore: `wanted` maps each indexed document to its
        content hash; `chunks_of(doc)` reads a document's chunks from the vector store. Only
        documents added, changed or gone are touched; returns how many."""
        held = self.hashes()
        gone = [doc for doc in held if doc not in wanted]
        stale = [doc for doc, content_hash in wanted.items() if held.get(doc) != content_hash]
        for doc in gone:
            self.delete(doc)
        for doc in stale:
            self.put(doc, wanted[doc], chunks_of(doc))
        return len(gone) + len(stale)


class LexicalRetriever(BaseRetriever):
    """BM25 retrieval from the lexical index, metadata filters applied in SQL."""

    def __init__(self, index: LexicalIndex, top_n: int = 20, filters: MetadataFilters | None = None) -> None:
        super().__init__()
        self._index, self._top_n, self._filters = index, top_n, filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._index.search(query_bundle.query_str, self._top_n, self._filters)


class LexicalScores:
    """BM25 scores of chosen chunks for a query: the reranker needs the score of every
    candidate, also of those that dense retrieval alone brought."""

    def __init__(self, index: LexicalIndex):
        self._index = index

    def __call__(self, query: str, node_ids: Sequence[str]) -> list[float]:
        return self._index.scores(query, node_ids) if self._index.exists() else [0.0] * len(node_ids)
