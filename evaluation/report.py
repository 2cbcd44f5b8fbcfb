"""report.md and its plots (matplotlib PNGs) for every kind of run, and side-by-side
comparison of two runs (`ragqa report A B`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display on a server
import matplotlib.pyplot as plt  # noqa: E402

from evaluation.judge import CRITERIA  # noqa: E402
from evaluation.runs import Run  # noqa: E402

RETRIEVAL_COLUMNS = ["map@1", "map@5", "map@10", "success@1", "success@5", "success@10", "mrr",
                     "evidence_recall@5", "mean_evidence_rank", "bundle_coverage@5", "source_traceability"]


def fmt(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def save(fig, run: Run, name: str) -> str:
    fig.tight_layout()
    fig.savefig(run.path / name, dpi=110)
    plt.close(fig)
    return f"![{name}]({name})"


def grouped_bars(run: Run, name: str, groups: dict[str, dict[str, float]], title: str, ylabel: str) -> str:
    """One group of bars per key of `groups`, one bar per inner key."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    series = list(next(iter(groups.values())))
    width = 0.8 / len(series)
    for i, key in enumerate(series):
        ax.bar([g + i * width for g in range(len(groups))], [groups[g][key] or 0 for g in groups], width,
               label=key)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(groups))], list(groups))
    ax.set(title=title, ylabel=ylabel, ylim=(0, 1.3))  # headroom for the legend
    ax.legend(fontsize=8, ncols=3, loc="upper center")
    return save(fig, run, name)


def retrieval_section(run: Run, metrics: dict[str, Any]) -> list[str]:
    n = next(iter(metrics["by_n"]))
    out = [f"## Retrieval by stage (n = {n}, {metrics['n_questions']} questions)",
           table(["stage", *RETRIEVAL_COLUMNS],
                 [[s, *(m.get(c) for c in RETRIEVAL_COLUMNS)] for s, m in metrics["stages"].items()])]
    keys = ["map@1", "map@5", "map@10", "success@1", "success@5", "success@10"]
    by_stage = {s: {k: m[k] for k in keys} for s, m in metrics["stages"].items()}
    out.append(grouped_bars(run, "stages.png", by_stage, f"MAP and Success by stage (n = {n})", "score"))
    if len(metrics["by_n"]) > 1:
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
        for ax, key in zip(axes, ("map@1", "success@5")):
            for stage in metrics["stages"]:
                ax.plot([int(k) for k in metrics["by_n"]], [v[stage][key] for v in metrics["by_n"].values()],
                        marker="o", label=stage)
            ax.set(title=f"{key} by n", xlabel="n")
        axes[0].legend(fontsize=8)
        out += ["## By n", table(["n", "stage", "map@1", "map@5", "success@5", "success@10"],
                                 [[n_, s, m["map@1"], m["map@5"], m["success@5"], m["success@10"]]
                                  for n_, stages in metrics["by_n"].items() for s, m in stages.items()]),
                save(fig, run, "by_n.png")]
    if "variants" in metrics:
        last = list(metrics["stages"])[-1]
        variants = metrics["variants"]
        rows = [[v, n_, *(by[n_][last][c] for c in keys)] for v, by in variants.items() for n_ in by]
        by_variant = {v: {k: by[n][last][k] for k in keys} for v, by in variants.items()}
        out += [f"## Variants (stage {last})", table(["variant", "n", *keys], rows),
                grouped_bars(run, "variants.png", by_variant, f"{last} stage by variant (n = {n})", "score")]
    return out


def histogram(run: Run, name: str, values: dict[str, list[float]], title: str, bins) -> str:
    fig, axes = plt.subplots(1, len(values), figsize=(3 * len(values), 2.8), squeeze=False)
    for ax, (key, data) in zip(axes[0], values.items()):
        ax.hist(data, bins=bins, color="#4477aa", edgecolor="white")
        ax.set_title(key, fontsize=9)
    fig.suptitle(title, fontsize=10)
    return save(fig, run, name)


def answers_section(run: Run, metrics: dict[str, Any]) -> list[str]:
    answers = metrics["answers"]
    out = ["## Answers", table(["metric", "value"], [[k, v] for k, v in answers.items() if k != "by_type"])]
    if "by_type" in answers:
        out += by_type_section(run, answers["by_type"])
    if "judge" in metrics:
        judge = metrics["judge"]
        out += ["## LLM judge (1-5)",
                table(["criterion", "mean", *[str(v) for v in range(1, 6)]],
                      [[c, judge[c], *judge[f"{c}_counts"].values()] for c in CRITERIA]),
                f"{judge['n_graded']} graded, {judge['n_failed']} without a valid judge reply."]
        grades = [r for r in run.results("judge") if "error" not in r["judge"]]
        if grades:
            scores = {c: [r["judge"][c] for r in grades] for c in CRITERIA}
            out.append(histogram(run, "judge_scores.png", scores, "Judge score distributions",
                                 bins=[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]))
    if "ragas" in metrics:
        ragas = metrics["ragas"]
        out += ["## RAGAS",
                table(["metric", "mean", "scored"], [[k, v["mean"], v["n"]] for k, v in ragas.items()])]
        rows = run.results("ragas")
        values = {k: [r["scores"][k] for r in rows if r["scores"].get(k) is not None] for k in ragas}
        values = {k: v for k, v in values.items() if v}
        if values:
            out.append(histogram(run, "ragas_scores.png", values, "RAGAS score distributions", bins=10))
    return out


def by_type_section(run: Run, by_type: dict[str, dict[str, Any]]) -> list[str]:
    """Right (of the answerable) and refused (of the unanswerable) per question type, as counts
    and as bars."""
    def share(part: int, whole: int) -> str:
        return f"{part}/{whole}" if whole else "-"

    rows = [[kind, m["n_questions"], share(m["n_right"], m["n_answerable"]),
             share(m["n_refused"], m["n_unanswerable"]), m["supported_but_wrong"]]
            for kind, m in by_type.items()]
    kinds = list(by_type)[::-1]  # the table's order, top down
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(kinds) + 1.2))
    bars = ((0.2, "right_when_answerable", "right (answerable)", "#228833"),
            (-0.2, "refused_when_unanswerable", "refused (unanswerable)", "#4477aa"))
    for offset, key, label, colour in bars:
        ax.barh([i + offset for i in range(len(kinds))], [by_type[k][key] or 0 for k in kinds], 0.4,
                color=colour, label=label)
    ax.set_yticks(range(len(kinds)), kinds)
    ax.set(xlim=(0, 1.05), title="Per question type")
    ax.legend(fontsize=8, loc="lower right")
    return ["## By question type",
            table(["type", "questions", "right", "refused", "supported but wrong"], rows),
            save(fig, run, "by_type.png")]


def references_section(run: Run, metrics: dict[str, Any]) -> list[str]:
    keys = ["n_answers", "n_sentences", "scorer", "threshold", "precision", "coverage", "segments_per_answer",
            "p50_ms", "p95_ms", "pairs_scored"]
    curve = metrics["by_threshold"]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot([p["threshold"] for p in curve], [p["precision"] for p in curve], marker="o", label="precision")
    ax.plot([p["threshold"] for p in curve], [p["coverage"] for p in curve], marker="s", label="coverage")
    ax.axvline(metrics["threshold"], color="grey", linestyle=":", label="configured threshold")
    ax.set(xlabel="threshold", ylim=(0, 1.02), title="Reference matching: precision and coverage")
    for variant, other in list(metrics.get("variants", {}).items())[1:]:  # the first is drawn above
        points = other["by_threshold"]
        thresholds = [p["threshold"] for p in points]
        ax.plot(thresholds, [p["precision"] for p in points], linestyle="--", label=f"precision, {variant}")
        ax.plot(thresholds, [p["coverage"] for p in points], linestyle=":", label=f"coverage, {variant}")
    ax.legend(fontsize=7)
    out = ["## Reference matching", table(["metric", "value"], [[k, metrics.get(k)] for k in keys]),
           save(fig, run, "threshold_curve.png"),
           table(["threshold", "precision", "coverage"],
                 [[p["threshold"], p["precision"], p["coverage"]] for p in curve])]
    if "variants" in metrics:
        out += ["## Variants",
                table(["variant", "scorer", "threshold", "precision", "coverage", "p50_ms"],
                      [[v, m["scorer"], m["threshold"], m["precision"], m["coverage"], m["p50_ms"]]
                       for v, m in metrics["variants"].items()])]
    return out


def pairwise_section(run: Run, metrics: dict[str, Any]) -> list[str]:
    pairs = metrics["pairwise"]
    fig, ax = plt.subplots(figsize=(6, 2.8))
    left = [0.0] * len(CRITERIA)
    for outcome, colour in (("win", "#228833"), ("tie", "#bbbbbb"), ("lose", "#ee6677")):
        rates = [pairs[c][f"{outcome}_rate"] or 0 for c in CRITERIA]
        ax.barh(CRITERIA, rates, left=left, color=colour, label=outcome)
        left = [a + b for a, b in zip(left, rates)]
    ax.set(xlim=(0, 1), title=f"A ({metrics['a_name']}) against B ({metrics['b_name']})")
    ax.legend(fontsize=8, ncols=3, loc="lower right")
    rows = [[c, pairs[c]["win"], pairs[c]["tie"], pairs[c]["lose"], pairs[c]["win_rate"]] for c in CRITERIA]
    return ["## Pairwise judge (both orders; a win needs both)",
            table(["criterion", "win", "tie", "lose", "win rate"], rows),
            f"{pairs['n_compared']} compared, {pairs['n_failed']} without a valid judge reply.",
            save(fig, run, "pairwise.png")]


SECTIONS = {"retrieval": retrieval_section, "answers": answers_section, "references": references_section,
            "pairwise": pairwise_section}


def write_report(run: Run) -> Path:
    config, metrics = run.config(), run.metrics()
    lines = [f"# {run.path.name}", "", f"`{config.get('command', '')}`", ""]
    for block in SECTIONS[config["kind"]](run, metrics):
        lines += [block, ""]
    target = run.path / "report.md"
    target.write_text("\n".join(lines), encoding="utf-8")
    return target


def flatten(data: Any, prefix: str = "") -> dict[str, float]:
    """Numeric leaves of nested metrics as "a.b.c" -> value."""
    if isinstance(data, dict):
        out: dict[str, float] = {}
        for key, value in data.items():
            out |= flatten(value, f"{prefix}{key}.")
        return out
    if isinstance(data, (int, float)) and not isinstance(data, bool):
        return {prefix.rstrip("."): data}
    return {}


def compare_runs(a: Run, b: Run, out: Run) -> Path:
    """Every metric both runs have, side by side with B - A."""
    left, right = flatten(a.metrics()), flatten(b.metrics())
    rows = [[key, left[key], right[key], right[key] - left[key]] for key in left if key in right]
    only = sorted(set(left) ^ set(right))
    lines = [f"# {a.path.name} vs {b.path.name}", "", f"A: `{a.path.name}`", f"B: `{b.path.name}`", "",
             table(["metric", "A", "B", "B - A"], rows)]
    if only:
        lines += ["", f"In one run only: {', '.join(only[:40])}{' ...' if len(only) > 40 else ''}"]
    out.write_json("metrics.json", {"a": str(a.path), "b": str(b.path),
                                    "diff": {r[0]: {"a": r[1], "b": r[2], "delta": r[3]} for r in rows}})
    target = out.path / "report.md"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target
