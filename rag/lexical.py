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
import math
import sqlite3
from collections import Counter
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

from rag.facts import FACTS_SCHEMA, FACTS_VERSION, Fact, delete_facts, read_facts, rebuild_facts, write_facts

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (doc TEXT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, node_id TEXT UNIQUE NOT NULL, doc TEXT NOT NULL, meta TEXT NOT NULL,
    text TEXT NOT NULL,
    length INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc);
CREATE VIRTUAL TABLE IF NOT EXISTS terms USING fts5 (
    tokens, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'"
);
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def tokens(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's tokens, as LlamaIndex's BM25Retriever makes them for the index and the query."""
    return bm25s.tokenize(list(texts), stopwords="en", stemmer=_stemmer(), return_ids=False,
                          show_progress=False)


def _terms(db: sqlite3.Connection, query: str) -> dict[str, int]:
    """The query's tokens that the index holds, each with the number of chunks holding it.

    A token in more than half of the chunks is left out (unless all are): FTS5's BM25 weighs it
    1e-6 (its IDF is negative, and clamped), yet scoring its postings is most of a query's time
    on a large store. Rankings stay the same, up to those 1e-6 terms."""
    words = list(dict.fromkeys(tokens([query])[0]))
    if not words:
        return {}
    marks = ", ".join("?" * len(words))
    found = dict(db.execute(f"SELECT term, doc FROM temp.vocab WHERE term IN ({marks})", words))
    rows = _state(db, "rows")
    return {w: n for w, n in found.items() if 2 * n <= rows} or found


def _match(terms: Mapping[str, int]) -> str:
    """An FTS5 query for any of these tokens (quoted: FTS5 reads bare AND, OR, NOT)."""
    return " OR ".join(f'"{word}"' for word in terms)


def _state(db: sqlite3.Connection, key: str) -> int:
    row = db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    return row[0] if row else 0


def bm25(terms: Mapping[str, int], words: Sequence[str], rows: int, average_length: float) -> float:
    """FTS5's bm25() (fts5_aux.c) of one chunk's tokens: k1 = 1.2, b = 0.75, IDF clamped at 1e-6."""
    k1, b = 1.2, 0.75
    counts = Counter(words)
    score = 0.0
    for word, hits in terms.items():
        idf = max(math.log((rows - hits + 0.5) / (hits + 0.5)), 0.0) or 1e-6
        tf = counts.get(word, 0)
        score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(words) / average_length))
    return score


def _where(filters: MetadataFilters | None) -> tuple[str, list[Any]]:
    """The SQL conditions of metadata filters as retrieval makes them (rag.retrieval.metadata_filters):
    all of them, each a field equal to a value or among values. Field names and values are bound,
    never spliced: a name is matched against the metadata's keys as json_each reads them, so an
    apostrophe, a quote, a dot or a bracket in it is only a character (a JSON path would read it)."""
    if filters is None:
        return "", []
    clauses, values = [], []
    for condition in filters.filters:
        wanted = list(condition.value) if condition.operator == FilterOperator.IN else [condition.value]
        if condition.operator not in (FilterOperator.IN, FilterOperator.EQ):
            raise ValueError(f"the lexical index does not filter by {condition.operator}")
        clauses.append("EXISTS (SELECT 1 FROM json_each(c.meta) AS field WHERE field.key = ? "
                       f"AND field.value IN ({', '.join('?' * len(wanted))}))")
        values += [condition.key, *wanted]
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
            connection.executescript(_SCHEMA + FACTS_SCHEMA)
            connection.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab(main, terms, 'row')")
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
            return _state(db, "version")

    def count(self) -> int:
        with self._connection() as db:
            return _state(db, "rows")

    def put(self, doc: str, content_hash: str, nodes: Sequence[BaseNode]) -> None:
        """Index `doc` as these chunks (replacing what it had), all or nothing."""
        # Scored as embedded (header prefix included), stored as Chroma stores it.
        embedded = [node.get_content(metadata_mode=MetadataMode.EMBED) for node in nodes]
        rows = [
            (node.node_id, doc, json.dumps(node_to_metadata_dict(node, remove_text=True), ensure_ascii=False),
             node.get_content(metadata_mode=MetadataMode.NONE), words)
            for node, words in zip(nodes, tokens(embedded) if embedded else [])
        ]
        with self._connection() as db, db:
            self._delete(db, doc)
            for node_id, doc_id, meta, text, words in rows:
                row = db.execute(
                    "INSERT INTO chunks (node_id, doc, meta, text, length) VALUES (?, ?, ?, ?, ?)",
                    (node_id, doc_id, meta, text, len(words))).lastrowid
                db.execute("INSERT INTO terms (rowid, tokens) VALUES (?, ?)", (row, " ".join(words)))
            write_facts(db, nodes)
            db.execute("INSERT OR REPLACE INTO documents (doc, hash) VALUES (?, ?)", (doc, content_hash))
            self._add(db, version=1, rows=len(rows), tokens=sum(len(r[4]) for r in rows))

    def delete(self, *docs: str) -> None:
        """Drop these documents' rows, all in one transaction."""
        with self._connection() as db, db:
            for doc in docs:
                self._delete(db, doc)
            self._add(db, version=1)

    def clear(self) -> None:
        """Drop every document; the version still grows, so readers see the change."""
        with self._connection() as db, db:
            db.execute("DELETE FROM terms")
            db.execute("DELETE FROM chunks")
            db.execute("DELETE FROM documents")
            delete_facts(db)
            db.execute("DELETE FROM state WHERE key != 'version'")
            self._add(db, version=1)

    def chunk_ids(self) -> dict[str, set[str]]:
        """Document id -> the ids of the chunks the index holds of it."""
        held: dict[str, set[str]] = {}
        for node_id, doc in self.chunk_documents().items():
            held.setdefault(doc, set()).add(node_id)
        return held

    def chunk_documents(self) -> dict[str, str]:
        """Chunk id -> its document's id, for every chunk the index holds."""
        if not self.exists():
            return {}
        with self._connection() as db:
            return dict(db.execute("SELECT node_id, doc FROM chunks"))

    def openings(self, length: int = 400) -> list[tuple[str, str]]:
        """(document id, the first `length` characters of a chunk) for every chunk: enough to tell
        its script by, without reading every chunk whole."""
        if not self.exists():
            return []
        with self._connection() as db:
            return list(db.execute("SELECT doc, substr(text, 1, ?) FROM chunks", (length,)))

    def document_text(self, doc: str) -> str:
        """A document's chunks' text, in the order they were indexed."""
        if not self.exists():
            return ""
        with self._connection() as db:
            return "\n\n".join(text for (text,) in db.execute(
                "SELECT text FROM chunks WHERE doc = ? ORDER BY id", (doc,)))

    def texts_with(self, part: str) -> list[str]:
        """The text of every chunk that holds `part`."""
        if not self.exists():
            return []
        with self._connection() as db:
            found = db.execute("SELECT text FROM chunks WHERE instr(text, ?) > 0", (part,))
            return [text for (text,) in found]

    @classmethod
    def _delete(cls, db: sqlite3.Connection, doc: str) -> None:
        rows, length = db.execute("SELECT count(*), coalesce(sum(length), 0) FROM chunks WHERE doc = ?",
                                  (doc,)).fetchone()
        db.execute("DELETE FROM terms WHERE rowid IN (SELECT id FROM chunks WHERE doc = ?)", (doc,))
        db.execute("DELETE FROM chunks WHERE doc = ?", (doc,))
        db.execute("DELETE FROM documents WHERE doc = ?", (doc,))
        delete_facts(db, doc)
        cls._add(db, rows=-rows, tokens=-length)

    @staticmethod
    def _add(db: sqlite3.Connection, **amounts: int) -> None:
        """Counters kept with the rows they count: the version, the chunks and their tokens
        (BM25's corpus size and average length, for `scores`)."""
        for key, amount in amounts.items():
            db.execute("INSERT INTO state (key, value) VALUES (?, ?) "
                       "ON CONFLICT (key) DO UPDATE SET value = value + ?", (key, amount, amount))

    def facts(self, docs: Sequence[str]) -> list[Fact]:
        """The table facts (rag/facts.py) of these documents."""
        if not self.exists() or not docs:
            return []
        with self._connection() as db:
            return read_facts(db, docs)

    def _refresh_facts(self) -> None:
        """Read every document's facts again from its stored chunks when they were extracted by
        another FACTS_VERSION (or by a version that had none): one transaction."""
        with self._connection() as db, db:
            if _state(db, "facts") != FACTS_VERSION:
                rebuild_facts(db, lambda meta, text: metadata_dict_to_node(meta, text=text))
                db.execute("INSERT OR REPLACE INTO state (key, value) VALUES ('facts', ?)", (FACTS_VERSION,))

    def search(self, query: str, limit: int, filters: MetadataFilters | None = None) -> list[NodeWithScore]:
        """The `limit` chunks of highest BM25 score (> 0) that pass the filters."""
        where, values = _where(filters)
        # Rank in FTS5 first and read the chunk rows of the top n only; a filter needs the
        # metadata of every match, so it joins before ranking.
        joined = "JOIN chunks c ON c.id = terms.rowid " if where else ""
        with self._connection() as db:
            terms = _terms(db, query)
            if not terms:
                return []
            rows = db.execute(
                f"WITH top AS (SELECT terms.rowid AS id, rank FROM terms {joined}"
                f"WHERE terms MATCH ?{where} ORDER BY rank LIMIT ?) "
                "SELECT c.meta, c.text, -top.rank FROM top JOIN chunks c ON c.id = top.id ORDER BY top.rank",
                [_match(terms), *values, limit],
            ).fetchall()
        return [NodeWithScore(node=metadata_dict_to_node(json.loads(meta), text=text), score=score)
                for meta, text, score in rows if score > 0]

    def scores(self, query: str, node_ids: Sequence[str]) -> list[float]:
        """BM25 scores of these chunks for the query (0 for a chunk without a query word), equal
        to FTS5's, computed from their stored tokens: asking FTS5 would score every chunk that
        holds a query word."""
        with self._connection() as db:
            terms = _terms(db, query)
            if not terms or not node_ids:
                return [0.0] * len(node_ids)
            rows, length = _state(db, "rows"), _state(db, "tokens")
            stored = dict(db.execute(
                "SELECT c.node_id, t.tokens FROM chunks c JOIN terms t ON t.rowid = c.id "
                f"WHERE c.node_id IN ({', '.join('?' * len(node_ids))})", list(node_ids)))
        return [bm25(terms, stored[i].split(), rows, length / rows) if i in stored else 0.0 for i in node_ids]

    def sync(self, wanted: Mapping[str, str], chunks_of) -> int:
        """Bring the index level with the docstore: `wanted` maps each indexed document to its
        content hash; `chunks_of(doc)` reads a document's chunks from the vector store. Only
        documents added, changed or gone are touched; returns how many."""
        self._refresh_facts()
        held = self.hashes()
        gone = [doc for doc in held if doc not in wanted]
        stale = [doc for doc, content_hash in wanted.items() if held.get(doc) != content_hash]
        if gone:
            self.delete(*gone)
        for doc in stale:
            self.put(doc, wanted[doc], chunks_of(doc))
        return len(gone) + len(stale)


class LexicalRetriever(BaseRetriever):
    """BM25 retrieval from the lexical index, metadata filters applied in SQL."""

    def __init__(self, index: LexicalIndex, similarity_top_k: int = 20,
                 filters: MetadataFilters | None = None) -> None:
        super().__init__()
        self._index, self._top_k, self._filters = index, similarity_top_k, filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._index.search(query_bundle.query_str, self._top_k, self._filters)


class LexicalScores:
    """BM25 scores of chosen chunks for a query: the reranker needs the score of every
    candidate, also of those that dense retrieval alone brought."""

    def __init__(self, index: LexicalIndex):
        self._index = index

    def __call__(self, query: str, node_ids: Sequence[str]) -> list[float]:
        return self._index.scores(query, node_ids) if self._index.exists() else [0.0] * len(node_ids)
