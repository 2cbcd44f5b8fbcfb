"""A fork's files, written by `ragqa init`: its config (rendered by rag/settings_toml.py: every key
of the settings' schema with its default and description, the survey's proposals in place of the
defaults, and the evidence for them as comments), its own copy of the prompts, and its folders."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ingestion.survey import Survey
from rag.settings import CONFIG_NAME, REPO_ROOT, Settings


def fork_overrides(survey: Survey, models_dir: Path) -> dict[str, Any]:
    """The keys a fork sets from its survey; the rest keep their defaults."""
    return {
        "storage_dir": "storage",
        "models_dir": str(models_dir),  # the prepared models are shared, not copied per fork
        "headers": {"fields": survey.header_fields, "filename_pattern": survey.filename_pattern,
                    "patterns": survey.patterns},
        "ingest": {"pdf_strategy": survey.pdf_strategy},
        "chunking": {"chunk_size": survey.chunk_size, "chunk_overlap": min(150, survey.chunk_size // 6)},
    }


def survey_notes(survey: Survey, docs: list[Path]) -> dict[str, list[str]]:
    """Comments above a section: why `ragqa init` proposed its values."""
    fields = [f"{f.name}: {f.evidence}" for f in survey.fields]
    return {
        "": [f"Written by `ragqa init` for {', '.join(str(d) for d in docs)}: {survey.files} files, "
             f"{len(survey.sampled)} sampled ({survey.hangul_files} mostly in Korean).",
             "Relative paths are taken from this file's folder; RAGQA_<SECTION>__<KEY> variables override "
             "any key."],
        "headers": fields or ["No field besides Title was common to the sampled files."],
        "ingest": [f"pdf_strategy: {survey.pdf_reason}."],
        "chunking": [f"chunk_size: {survey.chunk_reason}."],
    }


def shipped_prompts() -> list[Path]:
    """The prompt files the settings name by default, relative to the repository."""
    found = []

    def walk(model: type[BaseModel]) -> None:
        for info in model.model_fields.values():
            default = info.get_default(call_default_factory=True)
            if isinstance(default, Path) and default.parts[:1] == ("prompts",):
                found.append(default)
            elif isinstance(default, BaseModel):
                walk(type(default))

    walk(Settings)
    return sorted(set(found))


def write_fork(directory: Path, config_text: str, force: bool = False) -> Path:
    """The fork's config, a copy of each prompt (kept if the fork already edited it) and its qa/
    folder; refuses to overwrite a config unless `force`."""
    config = directory / CONFIG_NAME
    if config.exists() and not force:
        raise FileExistsError(f"{config} exists: pass --force to write it again (its prompts are kept)")
    directory.mkdir(parents=True, exist_ok=True)
    for prompt in shipped_prompts():
        target = directory / prompt
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO_ROOT / prompt, target)
    (directory / "qa").mkdir(exist_ok=True)
    config.write_text(config_text, encoding="utf-8")
    return config
