"""The benchmark corpora and their QA, each ingested once into a store of its own that later
benchmark runs reuse (storage/bench-stores/NAME; delete it after changing ingestion settings).

The sample corpus ships with the repository; the others are devbench's real documents (see
../shared/devbench/README.md), which a fork does not have: those corpora are skipped there.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import rag  # noqa: F401  (offline environment before any model import)
from evaluation.gold import load_qa
from ingestion.pipeline import catch_up_lexical, ingest
from rag.settings import REPO_ROOT, Settings, load_settings
from rag.store import Store

DEVBENCH = REPO_ROOT.parent / "shared" / "devbench"
STORES = REPO_ROOT / "storage" / "bench-stores"


@dataclass
class Corpus:
    name: str
    root: Path  # gold doc ids are relative to it
    parts: tuple[str, ...]  # files or folders under root to ingest; () for all of it
    qa: Path

    @property
    def available(self) -> bool:
        return self.qa.is_file() and all((self.root / p).exists() for p in self.parts)


CORPORA = [
    Corpus("sample", REPO_ROOT / "data/sample/docs", (), REPO_ROOT / "data/sample/qa.jsonl"),
    Corpus("debian_faq_en_html", DEVBENCH / "docs", ("debian-faq-en",),
           DEVBENCH / "qa/debian_faq_en_html.jsonl"),
    Corpus("debian_faq_ko_html", DEVBENCH / "docs", ("debian-faq-ko",),
           DEVBENCH / "qa/debian_faq_ko_html.jsonl"),
    Corpus("debian_faq_en_pdf", DEVBENCH / "docs", ("debian-faq.en.pdf",),
           DEVBENCH / "qa/debian_faq_en_pdf.jsonl"),
    Corpus("python_faq_html", DEVBENCH / "docs", ("python-faq",), DEVBENCH / "qa/python_faq_html.jsonl"),
]


def corpora(names: list[str] | None = None) -> list[Corpus]:
    chosen = [c for c in CORPORA if not names or c.name in names]
    return [c for c in chosen if c.available]


def answerable(qa_file: Path) -> list[dict]:
    """The QA file's answerable questions that name their evidence: what retrieval is scored on."""
    return [q for q in load_qa(qa_file) if q.get("answerable", True) and q["evidence"]]


def indexed(corpus: Corpus, stores: Path = STORES) -> Settings:
    """Settings pointing at the corpus's store, ingesting it first when the store is missing."""
    settings = load_settings()
    settings.storage_dir = stores / corpus.name
    if Store(settings).docstore_file.is_file():
        catch_up_lexical(settings)  # a store made before the lexical index was kept per document
    else:
        root = corpus.root
        if corpus.parts:  # copy only those parts, keeping their paths under the root as doc ids
            root = settings.storage_dir / "corpus"
            for part in corpus.parts:
                source, target = corpus.root / part, root / part
                target.parent.mkdir(parents=True, exist_ok=True)
                if source.is_dir():
                    shutil.copytree(source, target)
                else:
                    shutil.copy2(source, target)
        report = ingest([root], settings, progress=False)
        if report.failed:
            raise RuntimeError(f"{corpus.name}: {len(report.failed)} files failed to ingest")
    return settings
