"""What happens to the candidates: the rule rerank, the per-document cap, the context pack.

Example:
    >>> RerankSettings().context_budget_chars
    2300
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["RerankSettings"]


class RerankSettings(BaseModel):
    """The rule rerank and what the model is shown of its result."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    per_document_cap: int = Field(default=2, ge=1, description="Max evidence blocks per source.")
    rerank_weights: dict[str, float] = Field(
        default_factory=dict,
        description="Overrides of the rule rerank's boost sizes by name (``RerankWeights`` "
        "fields: l0_title, l0_keyword, l0_alias, l0_entity, domain_match, "
        "query_term_coverage, title_term_overlap, first_chunk, similarity_share, bm25_share); "
        "0 turns a boost off.",
    )
    context_budget_chars: int = Field(
        default=2300,
        ge=200,
        description="Context pack budget (characters): the blocks' text the model reads, its "
        "first line aside. The best block gets the room it needs first.",
    )
    relevance_knee: float = Field(
        default=0.54,
        ge=0.0,
        le=1.0,
        description="A block is shown to the model only when its score is at least this share "
        "of the first block's; the others are left out of the message (kept in the result, "
        "``contextPack.leftOut``) and counted in its first line. 0 shows every block.",
    )
    section_expand_chars: int = Field(
        default=0,
        ge=0,
        le=20_000,
        description="Small-to-big: the best block grows to more of its document, up to this many "
        "characters as the model reads them and never past the room the context budget leaves "
        "it beside the other shown blocks' headers and floors: first the document's other "
        "matches the per-document cap kept from being blocks (scoring at least "
        "``relevance_knee`` of it), then the chunks around it in its section (same document and "
        "top heading, read from the store by evidence key). 0 (the default) shows the matched "
        "chunk alone.",
    )
    table_rows: int = Field(
        default=3,
        ge=0,
        le=50,
        description="Option rows: the best block also shows up to this many rows of its "
        "document's markdown tables that hold the most of the question's terms (each term "
        "weighted by how few of the document's rows hold it; of two rows holding the same terms, "
        "the shorter first), each under its table's header "
        "row, never a row it already shows and never past the room the context budget leaves "
        "it. A document ingest counted no table in is not read for them. 0 adds none.",
    )
    best_document_chunks: int = Field(
        default=3,
        ge=0,
        le=20,
        description="Best chunks of the first document: the best block's document also shows up "
        "to this many of its other chunks, the ones holding the most of the question's terms "
        "(each term weighted by how few of the document's chunks hold it; two terms at least), "
        "read from the store, so the line that answers a how-to question (a variable, a "
        "command) shows even when the search ranked the document's introduction. They only "
        "take the room the context budget has left once every shown block is shown whole (what "
        "the message shows without them it shows the same); a chunk too long for that room "
        "shows the run of its lines holding the most of the question's terms. 0 adds none.",
    )

    @field_validator("rerank_weights")
    @classmethod
    def _rerank_weights_are_known(cls, value: dict[str, float]) -> dict[str, float]:
        from langchain_lookup_knowledge.core.rerank_weights import RerankWeights

        RerankWeights.from_overrides(value)  # names the unknown field or the bad value
        return value
