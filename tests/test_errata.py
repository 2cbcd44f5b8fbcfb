"""An erratum's corrections reach the report's own sentences (rag/errata.py through the context):
a quality report whose site commentary gives Lancaster's printed 412 ppm, and Derby's own 412
hours beside it, corrected by an erratum whose header puts the department before the word
ERRATUM. The real store links the two, the context shows Lancaster's figure in force and leaves
Derby's alone, and the real model answers from it."""

from __future__ import annotations

import pytest
from conftest import fresh_settings

from ingestion.pipeline import ingest

REPORT = """# Annual Quality Report 2023

Published 29 February 2024. Covers the Derby (DBY) and Lancaster (LNC) plants.

## 3. Site commentary

### 3.1 Derby

Derby's first-pass yield improved to 96.1%. The reflow oven on line 2 caused 412 hours of
unplanned downtime over the year, and its replacement is now a priority.

### 3.2 Lancaster

Lancaster's first-pass yield rose slightly to 96.5%. The defect rate increased to 412 ppm, driven
by bridging on fine-pitch parts on line 3.
"""

ERRATUM = """ACME ELECTRONICS LTD - GROUP QUALITY
ERRATUM: ANNUAL QUALITY REPORT 2023 (published 29 February 2024)
Issued: 22 March 2024

The following figures in the site commentary of the Annual Quality Report 2023 were wrong.

1. Lancaster (LNC), defects ppm 2023: published as 412 ppm. Corrected value: 214 ppm.
   The digits were transposed when the report was typeset.
"""


@pytest.fixture(scope="module")
def corrected(base_settings, tmp_path_factory, pipeline):
    from rag.pipeline import RagPipeline

    folder = tmp_path_factory.mktemp("errata-docs")
    (folder / "annual_quality_report_2023.md").write_text(REPORT, encoding="utf-8")
    (folder / "annual_quality_report_2023_erratum.txt").write_text(ERRATUM, encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("errata"))
    assert ingest([folder], settings, progress=False).indexed == 2
    return RagPipeline(settings, llm=pipeline.llm)


def context(pipeline, question: str) -> str:
    from llama_index.core.schema import QueryBundle

    query = QueryBundle(question)
    found = pipeline.current_retriever().retrieve(query)
    top = pipeline.reranker.postprocess_nodes(found, query_bundle=query)
    return pipeline.context.build(question, top, pipeline.budget(pipeline.room(question)))[0]


def test_the_erratum_corrects_the_reports_sentence_about_its_item_only(corrected):
    report = "annual_quality_report_2023.md"
    assert corrected.current.newer(report) == ["annual_quality_report_2023_erratum.txt"]
    lancaster = context(corrected, "What was Lancaster's defect rate in 2023?")
    assert "The defect rate increased to 214 (corrected) ppm" in lancaster and "412 ppm" not in lancaster
    derby = context(corrected, "How many hours of unplanned downtime did Derby's line 2 reflow oven cause?")
    assert "caused 412 hours of unplanned downtime" in derby


def test_the_model_answers_the_figure_in_force(corrected):
    answer = corrected.answer("What was Lancaster's defect rate in 2023?")
    assert answer.answerable and "214" in answer.answer and "412" not in answer.answer, answer.answer
