"""The `[facts]`, `[premise]` and `[hop]` sections: the checks that answer or refuse a question
before the model writes, and the second retrieval (rag/cells.py, rag/premise.py, rag/hop.py)."""

from __future__ import annotations

from pydantic import Field

from rag.settings_sections import Section


class FactsSettings(Section):
    """Table cells as facts (rag/facts.py), and questions answered from them (rag/cells.py)."""

    enabled: bool = Field(
        True, description="false: no question is answered from table cells (facts are still indexed)."
    )
    min_share: float = Field(
        0.75, gt=0, le=1, description="Share of a row label's or column header's words a question must name."
    )
    top_chunks: int = Field(
        3, ge=1, description="A table answers only when one of this many best-ranked chunks holds part of it "
        "(and no better-ranked chunk of another document names the cell's row)."
    )


class PremiseSettings(Section):
    """The question's own premise checked against the evidence before generation (rag/premise.py)."""

    enabled: bool = Field(True, description="false: the premise is never checked (no premise refusals).")
    qualifiers: bool = Field(
        True, description="Refuse a qualifier whose opposite the evidence states (youngest asked, oldest)."
    )
    entities: bool = Field(
        True, description="Refuse the question's codes, years, figures and names that no evidence text holds."
    )
    min_overlap: int = Field(
        2, ge=1, description="Content words an evidence sentence shares with the question to contradict it."
    )


class HopSettings(Section):
    """The second retrieval of a two-document question (rag/hop.py)."""

    enabled: bool = Field(True, description="false: no second retrieval (one round, as before).")
    chunks: int = Field(3, ge=1, description="The bridge is looked for in this many best-ranked kept chunks.")
    retrieve_k: int = Field(
        10, ge=1, description="New chunks of the second retrieval that join the candidates."
    )
    compose: bool = Field(
        True, description="After a second retrieval the answer quotes the evidence units, each cited to "
                          "its document (as [answer] mode = compose); false: the answer mode as set."
    )
    read: bool = Field(
        True, description="When a new chunk's row holds the entity and the asked column (or a sentence the "
                          "entity and the asked words), the answer quotes it and the bridge: no model call."
    )
