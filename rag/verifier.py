"""An LLM on an OpenAI-compatible server as the reference matcher's support scorer
(`support.method = "llm"`): asked whether the chunk states what the segment says, its score is
P(yes) / (P(yes) + P(no)) from the first token's log-probabilities. An instruction-tuned model
reads the statement, so a paraphrase or a translation is supported and a changed number is not
(docs/BENCHMARKS.md); pairs are sent `support.verifier_concurrency` at a time, and on the
embedded CPU model an answer's pairs would take minutes, hence server only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rag.scoring import Pair
from rag.settings import Settings


class LLMVerifier:
    kind = "llm-verifier"

    def __init__(self, client: Any, model: str, prompt: str, concurrency: int = 8):
        self.client = client
        self.model = model
        self.prompt = prompt
        self.concurrency = max(1, concurrency)

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMVerifier:
        cfg = settings.llm
        if cfg.backend != "server":
            raise ValueError(
                'support.method = "llm" needs llm.backend = "server" (an OpenAI-compatible server): '
                "the embedded model would judge an answer's pairs one at a time, for minutes"
            )
        from openai import OpenAI

        server = cfg.server
        client = OpenAI(base_url=server.api_base, api_key=server.api_key, timeout=server.timeout_s,
                        max_retries=server.max_retries)
        prompt = settings.support.verifier_prompt_file.read_text(encoding="utf-8")
        return cls(client, server.model, prompt, settings.support.verifier_concurrency)

    def __call__(self, pairs: Sequence[Pair], asked: str = "") -> list[float]:
        """P(yes) per pair; the model reads each statement whole, the question's words included."""
        if not pairs:
            return []
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(pairs))) as pool:
            return list(pool.map(self.judge, pairs))

    def judge(self, pair: Pair) -> float:
        statement, passage = pair
        reply = self.client.chat.completions.create(
            model=self.model,
            messages=[{"role": "user", "content": self.prompt.format(passage=passage, statement=statement)}],
            max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=10,
        )
        logprobs = reply.choices[0].logprobs
        top = logprobs.content[0].top_logprobs if logprobs and logprobs.content else []
        chance = {"yes": 0.0, "no": 0.0}
        for candidate in top:
            word = candidate.token.strip().lower()
            if word in chance:
                chance[word] += math.exp(candidate.logprob)
        total = chance["yes"] + chance["no"]
        return chance["yes"] / total if total > 0 else 0.0
