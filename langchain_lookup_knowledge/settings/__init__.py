"""Typed configuration for the lookup pipeline, read from ``LOOKUP_KNOWLEDGE_*`` env vars.

Settings are checked when they are built (arguments and env vars alike, and on assignment):
every bad value, alone or in a combination that cannot work, is named in one
:class:`~langchain_lookup_knowledge.errors.ConfigurationError`, before any lookup or ingest.
They are grouped by concern (:data:`GROUPS`): each group is a model of its own, given and read
by name (``settings.retrieval.top_k``) or flat (``settings.top_k``).

Example:
    >>> from langchain_lookup_knowledge import LookupSettings
    >>> settings = LookupSettings(collection="runbooks", top_k=5)
    >>> settings.collection
    'runbooks'
    >>> from langchain_lookup_knowledge.errors import ConfigurationError
    >>> try:
    ...     LookupSettings(chunk_size=400, chunk_overlap=300, top_k=0)
    ... except ConfigurationError as exc:
    ...     print(*str(exc).split("; "), sep="\\n")
    LookupSettings: top_k=0: Input should be greater than or equal to 1
    chunk_size=400 and chunk_overlap=300: chunk_overlap must be below chunk_size // 2
"""

from langchain_lookup_knowledge.settings.decision import DecisionSettings
from langchain_lookup_knowledge.settings.embedding import EmbeddingSettings
from langchain_lookup_knowledge.settings.environment import (
    take_unknown_setting_warnings,
    unknown_setting_variables,
)
from langchain_lookup_knowledge.settings.groups import GROUPS, REMOVED_SETTINGS
from langchain_lookup_knowledge.settings.ingest import IngestSettings
from langchain_lookup_knowledge.settings.limits import LimitSettings
from langchain_lookup_knowledge.settings.lookup import LookupSettings
from langchain_lookup_knowledge.settings.records import RecordSettings
from langchain_lookup_knowledge.settings.rerank import RerankSettings
from langchain_lookup_knowledge.settings.retrieval import RetrievalSettings
from langchain_lookup_knowledge.settings.store import StoreSettings
from langchain_lookup_knowledge.settings.types import (
    CANDIDATES_PER_BLOCK,
    DEFAULT_DATA_DIR,
    ENV_PREFIX,
    MAX_TIMEOUT_S,
    URL_FIELDS,
    MetricType,
    RetrievalMode,
    RetrievalPathMode,
    Seconds,
    UnitInterval,
)

__all__ = [
    "CANDIDATES_PER_BLOCK",
    "DEFAULT_DATA_DIR",
    "ENV_PREFIX",
    "GROUPS",
    "MAX_TIMEOUT_S",
    "REMOVED_SETTINGS",
    "URL_FIELDS",
    "DecisionSettings",
    "EmbeddingSettings",
    "IngestSettings",
    "LimitSettings",
    "LookupSettings",
    "MetricType",
    "RecordSettings",
    "RerankSettings",
    "RetrievalMode",
    "RetrievalPathMode",
    "RetrievalSettings",
    "Seconds",
    "StoreSettings",
    "UnitInterval",
    "take_unknown_setting_warnings",
    "unknown_setting_variables",
]
