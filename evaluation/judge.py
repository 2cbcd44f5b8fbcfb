"""LLM-as-judge, as in the paper: single-answer grades (correctness, helpfulness,
informativeness, 1-5, with a rationale) and pairwise preferences, anonymised and asked in both
orders to cancel position bias. Replies must be strict JSON; a malformed one is asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar

from llama_index.core.llms import LLM
from tqdm import tqdm

from rag.replies import parse_json_object
from rag.settings import Settings

CRITERIA = ("correctness", "helpfulness", "informativeness")
NO_REFERENCE = "(none given: judge from the question alone)"
T = TypeVar("T")
R = TypeVar("R")


def parse_grades(reply: str) -> dict[str, Any] | None:
    """{criterion: 1..5, "rationale": str} from a judge reply, or None when it is not that."""
    data = parse_json_object(reply)
    if data is None:
        return None
    grades: dict[str, Any] = {}
    for criterion in CRITERIA:
        value = data.get(criterion)
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 5:
            return None
        grades[criterion] = value
    grades["rationale"] = str(data.get("rationale") or "")
    return grades


def parse_preferences(reply: str) -> dict[str, str] | None:
    """{criterion: "1" | "2" | "tie"} from a pairwise reply, or None when it is not that."""
    data = parse_json_object(reply)
    if data is None:
        return None
    preferences = {}
    for criterion in CRITERIA:
        value = str(data.get(criterion, "")).strip().lower().removeprefix("answer ").strip()
        if value not in ("1", "2", "tie"):
            return None
        preferences[criterion] = value
    return preferences


def combine_orders(first: dict[str, str], swapped: dict[str, str]) -> dict[str, str]:
    """A's outcome per criterion from the verdicts with A shown first and with A shown second:
    a win or loss only when both orders agree, a tie otherwise."""
    outcome = {}
    for criterion in CRITERIA:
        a_first = {"1": "win", "2": "lose"}.get(first[criterion], "tie")
        a_second = {"2": "win", "1": "lose"}.get(swapped[criterion], "tie")
        outcome[criterion] = a_first if a_first == a_second else "tie"
    return outcome


@dataclass
class Judge:
    llm: LLM
    grade_prompt: str
    pairwise_prompt: str
    retries: int = 2
    timeout_s: float = 600
    concurrency: int = 1
    calls: int = field(default=0, init=False)

    @classmethod
    def from_settings(cls, settings: Settings, llm: LLM | None = None) -> Judge:
        from rag.models import build_llm

        cfg = settings.evaluation
        return cls(
            llm=llm or build_llm(settings, cfg.judge_llm),
            grade_prompt=cfg.judge_prompt_file.read_text(encoding="utf-8"),
            pairwise_prompt=cfg.pairwise_prompt_file.read_text(encoding="utf-8"),
            retries=cfg.retries,
            timeout_s=cfg.timeout_s,
            concurrency=cfg.concurrency,
        )

    def _ask(self, prompt: str, parse: Callable[[str], T | None]) -> tuple[T | None, str]:
        """The parsed reply and the raw text of the last attempt."""
        reply = ""
        for attempt in range(self.retries + 1):
            self.calls += 1
            text = prompt if attempt == 0 else (
                prompt + f"\n\nYour previous reply was not the JSON object asked for:\n{reply[:300]}\n"
                "Reply again with only the JSON object."
            )
            reply = self.llm.complete(text).text
            parsed = parse(reply)
            if parsed is not None:
                return parsed, reply
        return None, reply

    def grade(self, question: str, reference: str | None, answer: str) -> dict[str, Any]:
        prompt = self.grade_prompt.format(question=question, reference=reference or NO_REFERENCE,
                                          answer=answer)
        grades, reply = self._ask(prompt, parse_grades)
        return grades if grades is not None else {"error": "malformed judge reply", "reply": reply[:500]}

    def compare(self, question: str, reference: str | None, answer_a: str, answer_b: str) -> dict[str, Any]:
        """A's win/tie/lose per criterion against B, judged in both orders."""
        verdicts = []
        for first, second in ((answer_a, answer_b), (answer_b, answer_a)):
            prompt = self.pairwise_prompt.format(
                question=question, reference=reference or NO_REFERENCE, first=first, second=second
            )
            preferences, reply = self._ask(prompt, parse_preferences)
            if preferences is None:
                return {"error": "malformed judge reply", "reply": reply[:500]}
            verdicts.append(preferences)
        return {"outcome": combine_orders(*verdicts), "a_first": verdicts[0], "b_first": verdicts[1]}

    def map(self, work: Callable[[T], R], items: Iterable[T], desc: str) -> Iterable[tuple[T, R | dict]]:
        """(item, result) as results arrive, at most `concurrency` calls in flight; a call that
        exceeds `timeout_s` or fails yields an error entry instead of stopping the run."""
        items = list(items)
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency)) as pool, tqdm(
            total=len(items), desc=desc, unit="q"
        ) as bar:
            pending = [(item, pool.submit(work, item)) for item in items]
            for item, future in pending:
                try:
                    result = future.result(timeout=self.timeout_s)
                except FutureTimeout:
                    result = {"error": f"judge call timed out after {self.timeout_s:.0f} s"}
                except Exception as error:  # one failed call must not lose the others' results
                    result = {"error": f"judge call failed: {error}"}
                bar.update()
                yield item, result


def summarise_grades(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean and distribution of each criterion over the graded rows."""
    graded = [row["judge"] for row in rows if "judge" in row and "error" not in row["judge"]]
    failed = sum(1 for r in rows if "error" in r.get("judge", {}))
    out: dict[str, Any] = {"n_graded": len(graded), "n_failed": failed}
    for criterion in CRITERIA:
        values = [g[criterion] for g in graded]
        out[criterion] = round(sum(values) / len(values), 3) if values else None
        out[f"{criterion}_counts"] = {str(v): values.count(v) for v in range(1, 6)}
    return out


def summarise_pairs(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Win/tie/lose counts and rates of A against B per criterion."""
    outcomes = [row["pair"]["outcome"] for row in rows if "outcome" in row.get("pair", {})]
    out: dict[str, Any] = {"n_compared": len(outcomes), "n_failed": len(rows) - len(outcomes)}
    for criterion in CRITERIA:
        counts = {k: sum(1 for o in outcomes if o[criterion] == k) for k in ("win", "tie", "lose")}
        out[criterion] = counts | {
            f"{k}_rate": round(v / len(outcomes), 3) if outcomes else None for k, v in counts.items()
        }
    return out
