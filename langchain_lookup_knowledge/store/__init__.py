"""Milvus access: connections, collection layout, safe filter expressions, the catalog."""

from langchain_lookup_knowledge.core.filters import CategoryFilter, filter_to_expr
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.schema import CollectionLayout

__all__ = [
    "CategoryFilter",
    "CollectionLayout",
    "close_all_clients",
    "filter_to_expr",
    "open_client",
]
