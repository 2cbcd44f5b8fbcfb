"""The sections of the tools around the engine: `ragqa serve`'s UI, evaluation and training."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field

from rag.settings_sections import ConfigFile, LLMSettings, Section


class UISettings(Section):
    """`ragqa serve`."""

    host: str = Field(
        "127.0.0.1",
        description="Address `ragqa serve` binds; 0.0.0.0 shares it on the network: set users too.",
    )
    port: int = Field(7860, ge=1, le=65535, description="Port of `ragqa serve`.")
    users: list[str] = Field(
        default_factory=list,
        description="USER:HASH entries (`ragqa hash-password`); any: a login is required. "
        "Env: RAGQA_UI__USERS as JSON.",
    )
    api_keys: list[str] = Field(
        default_factory=list,
        description="USER:sha256$HEX entries (`ragqa api-key USER`) for the API at /v1; with users or keys "
        "set, it needs a key. Env: RAGQA_UI__API_KEYS as JSON.",
    )
    concurrency: int = Field(
        4, ge=1,
        description="Answers written at once with a server LLM backend; the embedded model writes one.",
    )
    max_questions: int = Field(
        2, ge=1, description="Questions one login (without logins: one browser session) may have waiting or "
        "being answered; one more is refused with a message, so that one user cannot starve the others.",
    )
    login_failures: int = Field(
        5, ge=1,
        description="Failed logins within lockout_s that lock the user name, and the client address, "
        "for lockout_s.",
    )
    lockout_s: float = Field(
        300, gt=0, description="How long a locked user name or address is refused, right password included."
    )

    def user_hashes(self) -> dict[str, str]:
        pairs = [entry.split(":", 1) for entry in self.users]
        bad = [entry for entry, pair in zip(self.users, pairs) if len(pair) != 2 or not all(pair)]
        if bad:
            raise ValueError(f"ui.users entries are USER:HASH (from `ragqa hash-password`), not {bad[0]!r}")
        return dict(pairs)

    def key_hashes(self) -> dict[str, str]:
        """'sha256$HEX' -> its user, of `api_keys`."""
        pairs = [entry.split(":", 1) for entry in self.api_keys]
        bad = [entry for entry, pair in zip(self.api_keys, pairs)
               if len(pair) != 2 or not pair[0] or not pair[1].startswith("sha256$")]
        if bad:
            raise ValueError(f"ui.api_keys entries are USER:sha256$HEX (`ragqa api-key`), not {bad[0]!r}")
        return {digest: user for user, digest in pairs}


class EvaluationSettings(Section):
    """The LLM judge of `ragqa eval answers|judge|ragas` and its prompts."""

    judge_llm: LLMSettings | None = Field(
        None, description="Judge backend with the keys of [llm], e.g. a stronger model on a server; absent: "
        "the [llm] backend."
    )
    judge_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/judge.txt"), description="Single-answer grading prompt."
    )
    pairwise_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/judge_pairwise.txt"), description="Pairwise prompt."
    )
    no_rag_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/no_rag.txt"), description="Prompt of --no-rag runs (the same LLM without documents)."
    )
    retries: int = Field(2, ge=0, description="Extra judge calls when its reply is not the JSON asked for.")
    timeout_s: float = Field(600, gt=0, description="Longest wait for one judge call.")
    concurrency: int = Field(1, ge=1, description="Judge calls in flight (raise it for a server judge).")


class TrainingSettings(Section):
    """`ragqa qa generate` and `ragqa train reranker|retriever`."""

    qa_prompt_file: Annotated[Path, ConfigFile()] = Field(
        Path("prompts/qa_generate.txt"), description="Question generation prompt."
    )
    questions_per_chunk: int = Field(3, ge=1, description="Questions asked per chunk.")
    max_new_tokens: int = Field(
        512, ge=1, description="Generation budget of one chunk's questions and answers."
    )
