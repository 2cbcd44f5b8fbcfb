"""The Documents tab's handlers: uploads indexed with their per-file outcome, the indexed
documents listed, documents deleted."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from app.render import escape
from app.server import discard_uploads
from rag.settings import Settings


def index_uploads(settings: Settings, files: list[str], progress: gr.Progress | None = None) -> str:
    """Copy uploaded files under storage/uploads and index them. A file of the wrong type or
    size is not copied; a failed file leaves no copy (and an earlier upload of the same name is
    kept); replacing a document is said. Only the file's base name is used: an upload cannot
    write outside storage/uploads."""
    from ingestion.convert import check_file
    from ingestion.document import DocumentLoadError
    from ingestion.pipeline import ingest
    from rag.store import Store, StoreBusyError, StoreError

    if not files:
        return "Choose one or more files first."
    uploads = Store(settings).uploads_dir
    uploads.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path | None]] = []  # (copy, the earlier upload it displaced)
    refused: list[str] = []
    for file in files:
        name = Path(file).name
        try:
            check_file(Path(file), settings.ingest)
        except DocumentLoadError as error:
            refused.append(f"- **{escape(name, True)}**: {escape(str(error), True)}")
            continue
        target = uploads / name
        earlier = None
        if target.exists():
            earlier = target.with_name(f".{target.name}.earlier")
            os.replace(target, earlier)
        shutil.copyfile(file, target)
        staged.append((target, earlier))
    if not staged:
        return "\n\n".join(["Nothing was indexed."] + refused)

    def report_progress(done: int, total: int, current: str) -> None:
        if progress is not None:
            progress((done, total), desc=f"indexing {current}" if current else "done", unit="files")

    try:
        report = ingest([target for target, _ in staged], settings, progress=False,
                        on_progress=report_progress)
    except (StoreBusyError, StoreError) as error:
        failed = {str(target) for target, _ in staged}
        message = f"Nothing was indexed: {escape(str(error), True)}."
    else:  # a copy of an indexed file is not indexed, so its upload is not kept either
        failed = {f["file"] for f in report.failed} | {d["file"] for d in report.duplicates}
        message = ""
    for target, earlier in staged:
        if str(target) in failed:
            target.unlink()
            if earlier is not None:
                os.replace(earlier, target)
        elif earlier is not None:
            earlier.unlink()
    if message:
        return message
    lines = [report.summary().splitlines()[0]]
    for target, _ in staged:
        doc_id = report.doc_ids.get(str(target))
        name = escape(target.name, True)
        if str(target) in failed:
            continue
        if doc_id in report.replaced:
            lines.append(f"- **{name}** replaced the earlier upload of the same name")
        elif doc_id != target.name:
            lines.append(f"- **{name}** is indexed as **{escape(doc_id, True)}**: another document "
                         "of that name is already indexed and was kept")
    lines += [f"- **{escape(Path(f['file']).name, True)}**: {escape(f['reason'], True)}"
              for f in report.failed]
    lines += [f"- **{escape(Path(d['file']).name, True)}**: same content as "
              f"**{escape(d['same_as'], True)}**, "
              "not indexed twice" for d in report.duplicates]
    return "\n\n".join(lines + refused)


DOCUMENT_COLUMNS = ["document", "chunks", "indexed (UTC)", "file", "currency"]


def document_rows(settings: Settings) -> list[list[Any]]:
    """The Documents tab's table (DOCUMENT_COLUMNS): id, chunks, indexed (UTC), file name (not the
    server's path), currency (date, version, status, superseded or corrected by)."""
    from rag.currency import standings
    from ingestion.pipeline import indexed_documents

    documents = indexed_documents(settings)
    currency = standings(documents)
    return [[d.doc, d.chunks, d.indexed.replace("T", " ").replace("+00:00", "") or "-", Path(d.source).name,
             currency[d.doc] or "-"] for d in documents]


@dataclass
class Documents:
    """The Documents tab's events; each ends with the documents listed again, as the table, the
    choices to delete and the Ask tab's choices."""

    settings: Settings

    def listing(self) -> tuple[list[list[Any]], dict, dict]:
        rows = document_rows(self.settings)
        ids = [row[0] for row in rows]
        return rows, gr.update(choices=ids, value=[]), gr.update(choices=ids)

    def upload(self, files: list[str] | None, progress=gr.Progress()) -> tuple:
        try:
            report = index_uploads(self.settings, files or [], progress)
        finally:
            discard_uploads(files or [])
        return (report, *self.listing())

    def delete(self, docs: list[str] | None) -> tuple:
        from ingestion.pipeline import remove
        from rag.store import StoreBusyError

        if not docs:
            return ("Choose the documents to delete first.", *self.listing())
        try:
            removed = remove(list(docs), self.settings)
        except StoreBusyError as error:
            return (f"Nothing was deleted: {escape(str(error), True)}.", *self.listing())
        # Ids as text, not code spans: an escaped name in backticks would show its escapes.
        lines = [f"Deleted {len(removed)}: " + ", ".join(f"**{escape(d, True)}**" for d in removed)]
        if missing := [d for d in docs if d not in removed]:  # a script may name any id (gradio_client)
            lines.append("Not indexed, so not deleted: "
                         + ", ".join(f"**{escape(d, True)}**" for d in missing))
        return ("\n\n".join(lines), *self.listing())
