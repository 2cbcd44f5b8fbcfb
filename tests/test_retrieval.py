"""Hybrid retrieval on a small real index, the reranker with a real CrossEncoder folder, and the
matcher's lexical support blend."""

from __future__ import annotations

import pytest
from conftest import fresh_settings
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ingestion.pipeline import ingest
from rag.models import build_embedding
from rag.postprocessors import build_rerank_stage
from rag.retrieval import bm25_retriever, dense_retriever, hybrid_retriever
from rag.scoring import CrossEncoderScorer, bi_encoder
from rag.store import Store
from rag.support import lexical_support


@pytest.fixture(scope="module")
def store(base_settings, tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    (folder / "patch.md").write_text("---\nTitle: Parts list\nRegion: Patagonia\n---\n# Parts list\n\n"
                                     "Part QX-4471-B is the left B-pillar patch.", encoding="utf-8")
    (folder / "airbags.md").write_text("# Airbags\n\nThe curtain airbag protects the head in a side crash.",
                                       encoding="utf-8")
    (folder / "seats.md").write_text("# Seats\n\nThe seat frame is made of high-strength steel.",
                                     encoding="utf-8")
    settings = fresh_settings(base_settings, tmp_path_factory.mktemp("storage"),
                              headers={"fields": ["Title", "Region"], "patterns": {}})
    ingest([folder], settings, progress=False)
    return settings, folder


def docs(nodes):
    return [n.node.metadata["doc"] for n in nodes]


def test_bm25_finds_exact_ids_and_header_fields(store):
    settings, _ = store
    bm25 = bm25_retriever(settings)
    assert docs(bm25.retrieve("QX-4471-B"))[0] == "patch.md"
    assert docs(bm25.retrieve("Patagonia"))[0] == "patch.md"  # only in the header


def test_hybrid_fuses_both_channels_once_each(store, pipeline):
    settings, _ = store
    embedding = build_embedding(settings)
    hybrid = hybrid_retriever(settings, embedding, pipeline.llm).retrieve(
        "Which part is the B-pillar patch QX-4471-B?")
    assert docs(hybrid)[0] == "patch.md"
    assert len({n.node.node_id for n in hybrid}) == len(hybrid) == 3  # found by both, listed once
    dense = dense_retriever(settings, embedding).retrieve("head protection in a side crash")
    assert docs(dense)[0] == "airbags.md"


def test_bm25_follows_the_store(store):
    settings, folder = store
    (folder / "seats.md").unlink()
    ingest([folder], settings, prune=True, progress=False)
    assert "seats.md" not in docs(bm25_retriever(settings).retrieve("seat frame steel"))


def test_reranker_with_a_cross_encoder_folder(base_settings, tmp_path):
    from sentence_transformers import CrossEncoder

    folder = tmp_path / "cross-encoder"
    CrossEncoder(str(base_settings.embedding_path), num_labels=1, device="cpu").save(str(folder))
    chosen = {"method": "cross-encoder", "cross_encoder_path": str(folder)}
    settings = fresh_settings(base_settings, tmp_path / "storage", rerank=chosen)
    rerank = build_rerank_stage(settings, Store(settings), build_embedding(settings), top_n=2)
    scorer = rerank.scorer
    assert isinstance(scorer, CrossEncoderScorer) and rerank.scorer_kind == "cross-encoder"
    nodes = [NodeWithScore(node=TextNode(text=t, id_=str(i)), score=0.0)
             for i, t in enumerate(["a", "b", "c"])]
    ranked = rerank.postprocess_nodes(nodes, query_bundle=QueryBundle("a"))
    direct = scorer([("a", "a"), ("a", "b"), ("a", "c")])
    assert len(ranked) == 2 and all(0.0 <= s <= 1.0 for s in direct)
    assert [n.score for n in ranked] == sorted(direct, reverse=True)[:2]
    with pytest.raises(FileNotFoundError, match="not a CrossEncoder folder"):
        gone = chosen | {"cross_encoder_path": str(tmp_path / "none")}
        missing = fresh_settings(base_settings, tmp_path / "s2", rerank=gone)
        build_rerank_stage(missing, Store(missing), None)
    # The learned ranker ranks by default: a CrossEncoder folder named beside it is not loaded.
    beside = fresh_settings(base_settings, tmp_path / "s3",
                            rerank={"cross_encoder_path": str(tmp_path / "none")})
    assert build_rerank_stage(beside, Store(beside), None).scorer_kind == "ltr"


def test_batched_query_embeddings_equal_single_ones(base_settings):
    import numpy as np

    embedding = build_embedding(base_settings)
    scorer = bi_encoder(base_settings, embedding)
    texts = ["The airbag deployed after 14 ms.", "측면 충돌 시험 결과", "A much longer sentence " * 8]
    batched = scorer.embed(texts, query=True)
    single = np.asarray([embedding.get_query_embedding(t) for t in texts])
    assert np.einsum("ij,ij->i", batched, single).min() > 0.9999


def test_document_and_header_filters_reach_both_channels(store, pipeline):
    from rag.retrieval import metadata_filters, parse_where

    settings, _ = store
    embedding = build_embedding(settings)
    question = "Which part is the B-pillar patch QX-4471-B?"

    def hybrid(filters):
        return set(docs(hybrid_retriever(settings, embedding, pipeline.llm, filters=filters)
                        .retrieve(question)))

    assert hybrid(metadata_filters(docs=["airbags.md"])) == {"airbags.md"}
    assert hybrid(metadata_filters(where=parse_where(["Region=Patagonia"]))) == {"patch.md"}
    assert bm25_retriever(settings, filters=metadata_filters(["no-such.md"])).retrieve(question) == []
    assert bm25_retriever(settings, filters=metadata_filters(where={"Region": "Atlantis"})).retrieve(
        question) == []
    assert docs(bm25_retriever(settings, filters=metadata_filters(["airbags.md", "patch.md"])).retrieve(
        question)) == ["patch.md"]
    assert metadata_filters([], {}) is None
    with pytest.raises(ValueError, match="not FIELD=VALUE"):
        parse_where(["Region"])


def test_lexical_support_counts_the_segments_wording_in_the_chunk():
    chunk = "The cell temperature peaked at 61 degrees Celsius and no thermal runaway occurred."
    assert lexical_support("The cell temperature peaked at 61 degrees Celsius.", chunk) == 1.0
    assert lexical_support("The cafeteria opens at 7:30 on weekdays.", chunk) < 0.3
    # Korean particles change a word's end, not most of its trigrams.
    assert lexical_support("최대 가속도는 52 g였다", "시험에서 최대 가속도가 52 g로 측정되었다") > 0.5
    assert lexical_support("", chunk) == 0.0
    # A chunk without the statement's figure cannot support it, however similar the wording.
    assert lexical_support("The B-pillar intrusion was 142 mm.",
                           "The B-pillar intrusion was 98 mm.") == 0.0
    assert lexical_support("SI-2024-03 measured 142 mm.",
                           "SI-2024-03 measured 98 mm.") == pytest.approx(2 / 3)


@pytest.fixture(scope="module")
def support(base_settings):
    from rag.scoring import bi_encoder
    from rag.support import support_scorer

    return support_scorer(base_settings, bi_encoder(base_settings, build_embedding(base_settings)))


def test_support_takes_paraphrase_and_refuses_a_changed_figure(base_settings, support):
    """The learned support model: a paraphrase of the chunk's statement is supported, the same
    paraphrase with another figure and an off-topic sentence are not."""
    chunk = ("Title: Battery abuse report\n\n# Nail penetration\n\nA steel nail pierced the cell at 80 mm/s. "
             "The cell temperature peaked at 61 degrees Celsius and no thermal runaway occurred.")
    copied, reordered, reworded, changed, foreign = support([
        ("The cell temperature peaked at 61 degrees Celsius.", chunk),
        ("The temperature of the cell peaked at 61 degrees Celsius.", chunk),
        ("No thermal runaway occurred, and the cell's temperature peaked at 61 °C.", chunk),
        ("No thermal runaway occurred, and the cell's temperature peaked at 71 °C.", chunk),
        ("The cafeteria opens at 7:30 on weekdays.", chunk),
    ])
    threshold = base_settings.support.threshold
    assert support.kind == "learned-support"
    assert min(copied, reordered, reworded) > threshold
    assert changed < threshold and foreign < threshold


def test_support_backs_a_korean_answer_resting_on_a_copied_command(base_settings, support):
    """Across scripts the cosines do not back a terse answer whose content is a file or package
    name; the code rule does, and only for the chunk that holds it."""
    faq = ("Title: Getting support\n\n## How do I report a bug?\n\nYou can use the package reportbug that "
           "will guide you through the reporting process.")
    other = ("Title: Getting support\n\n## Are there logs of known bugs?\n\n"
             "Send an e-mail to request@bugs.debian.org.")
    stated, elsewhere, wrong = support([("패키지는 `reportbug`입니다.", faq),
                                        ("패키지는 `reportbug`입니다.", other),
                                        ("패키지는 `bugreport`입니다.", faq)])
    threshold = base_settings.support.threshold
    assert stated > threshold and elsewhere < threshold and wrong < threshold


def test_hybrid_scores_are_the_fusion_of_both_channels(store, pipeline):
    """Every hybrid score is the reciprocal-rank sum over dense AND BM25: dropping either
    channel from the fusion changes the scores of the chunks both found."""
    settings, _ = store
    embedding = build_embedding(settings)
    query = "What protects the part of the body above the neck?"  # the channels disagree on it

    def ranks(nodes):
        return {n.node.node_id: r
                for r, n in enumerate(sorted(nodes, key=lambda n: n.score or 0.0, reverse=True))}

    dense = ranks(dense_retriever(settings, embedding).retrieve(query))
    bm25 = ranks(bm25_retriever(settings).retrieve(query))
    hybrid = hybrid_retriever(settings, embedding, pipeline.llm).retrieve(query)
    assert list(dense) != list(bm25) and set(dense) & set(bm25)
    assert {n.node.node_id for n in hybrid} == set(dense) | set(bm25)
    for node in hybrid:
        expected = sum(1.0 / (60 + r[node.node.node_id]) for r in (dense, bm25) if node.node.node_id in r)
        assert node.score == pytest.approx(expected)


def test_support_across_languages_keeps_numbers_decisive(base_settings, support):
    """An English segment cannot share words with its Korean chunk: the chunk's sentence it
    translates carries it, and a wrong figure is unsupported in any language."""
    scorer = support
    korean = "측면 충돌 시험에서 B필러는 142 mm 침입했다. 목표치는 120 mm였다."
    right, wrong, unrelated = scorer([
        ("In the side impact test the B-pillar intruded 142 mm.", korean),
        ("In the side impact test the B-pillar intruded 152 mm.", korean),
        ("The cafeteria closes at 15:00 on weekdays.", korean),
    ])
    threshold = base_settings.support.threshold
    assert right > threshold > max(wrong, unrelated)
