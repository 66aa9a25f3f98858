"""``LookupSettings``: every setting, grouped by concern, read from ``LOOKUP_KNOWLEDGE_*``.

Each group (store, embedding, retrieval, rerank, decision, records, ingest, limits) is its own
model; ``LookupSettings`` is all of them at once. A setting is given flat, as an argument or its
environment variable (``top_k=3``, ``LOOKUP_KNOWLEDGE_TOP_K=3``), or by group
(``retrieval={"top_k": 3}``), and read flat (``settings.top_k``) or by group
(``settings.retrieval.top_k``, a read-only view).

Example:
    >>> settings = LookupSettings(retrieval={"top_k": 3}, collection="runbooks")
    >>> settings.top_k, settings.retrieval.top_k, settings.store.collection
    (3, 3, 'runbooks')
"""

from __future__ import annotations

import difflib
import inspect
import logging
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError, ValidationInfo, field_serializer, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.redaction import mask_url
from langchain_lookup_knowledge.settings.decision import DecisionSettings
from langchain_lookup_knowledge.settings.embedding import EmbeddingSettings
from langchain_lookup_knowledge.settings.environment import (
    removed_setting_variables,
    take_unknown_setting_warnings,
)
from langchain_lookup_knowledge.settings.groups import (
    GROUPS,
    REMOVED_SETTINGS,
    group_of,
    setting_names,
)
from langchain_lookup_knowledge.settings.ingest import IngestSettings
from langchain_lookup_knowledge.settings.limits import LimitSettings
from langchain_lookup_knowledge.settings.records import RecordSettings
from langchain_lookup_knowledge.settings.rerank import RerankSettings
from langchain_lookup_knowledge.settings.retrieval import RetrievalSettings
from langchain_lookup_knowledge.settings.store import StoreSettings
from langchain_lookup_knowledge.settings.types import ENV_PREFIX, URL_FIELDS
from langchain_lookup_knowledge.settings.validation import (
    RULES_OF,
    DisagreementError,
    describe,
    describe_unparsable,
    shown,
)

__all__ = ["LookupSettings"]

logger = logging.getLogger("langchain_lookup_knowledge.settings")


# ``BaseSettings``' own keyword arguments (``_env_file``, ``_secrets_dir``, ...): not settings,
# but accepted as they always were.
_BASE_SETTINGS_ARGUMENTS = frozenset(
    name
    for name in inspect.signature(BaseSettings.__init__).parameters
    if name.startswith("_") and not name.startswith("__")
)


def _did_you_mean(name: str, candidates: list[str]) -> str:
    """`` (did you mean 'a' or 'b'?)``: the names of ``candidates`` nearest ``name``, or ``""``.

    Example:
        >>> _did_you_mean("collection_name", ["collection", "catalog_collection", "top_k"])
        " (did you mean 'collection' or 'catalog_collection'?)"
    """
    close = [repr(c) for c in difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)]
    if not close:
        return ""
    listed = close[0] if len(close) == 1 else f"{', '.join(close[:-1])} or {close[-1]}"
    return f" (did you mean {listed}?)"


def _unknown_name(name: str) -> str:
    """Why ``name``, given flat, is no setting, with the nearest settings or groups."""
    hint = _did_you_mean(name.lower(), setting_names() + list(GROUPS))
    return f"unknown setting {name!r}{hint or ' (docs/configuration.md lists every setting)'}"


def _not_in_group(group: str, name: str) -> str:
    """Why ``name``, given in ``group``, is no setting of it: its own group, or the nearest."""
    try:
        hint = f" ({name} is a {group_of(name)} setting)"
    except KeyError:
        hint = _did_you_mean(name, list(GROUPS[group].model_fields))
    return f"{group}.{name}: not a setting of the {group} group{hint}"


def _flattened(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each group given by name (``retrieval={...}``) spread into its settings.

    Raises:
        ConfigurationError: a name that is no setting (flat or in its group: a typo is an error
            here, not a default used in silence), a group that is not a mapping, a setting given
            both flat and in its group, or a removed setting.
    """
    flat: dict[str, Any] = {}
    problems: list[str] = []
    names = set(setting_names())
    for key, value in values.items():
        if key not in GROUPS:
            known = key.lower() in names or key in REMOVED_SETTINGS  # names are case-insensitive
            if not known and key not in _BASE_SETTINGS_ARGUMENTS:
                problems.append(_unknown_name(key))
            flat[key] = value
            continue
        model = GROUPS[key]
        items = value.model_dump() if isinstance(value, BaseModel) else value
        if not isinstance(items, Mapping):
            problems.append(f"{key}={shown(key, value)}: a group is a mapping of its settings")
            continue
        for name, item in items.items():
            if name not in model.model_fields:
                problems.append(_not_in_group(key, name))
            elif name in values:
                problems.append(f"{name} is given twice (flat and in {key})")
            else:
                flat[name] = item
    removed = [name for name in REMOVED_SETTINGS if name in flat]
    removed += [n for n in removed_setting_variables(os.environ) if n not in removed]
    problems += [
        f"{name} (or {ENV_PREFIX}{name.upper()}) was removed: {REMOVED_SETTINGS[name]}"
        for name in removed
    ]
    if problems:
        raise ConfigurationError("LookupSettings: " + "; ".join(problems))
    return flat


class LookupSettings(  # fields in the order of the groups: pydantic reads bases last first
    LimitSettings,
    IngestSettings,
    RecordSettings,
    DecisionSettings,
    RerankSettings,
    RetrievalSettings,
    EmbeddingSettings,
    StoreSettings,
    BaseSettings,
):
    """Every knob of ingestion and lookup. Env vars: ``LOOKUP_KNOWLEDGE_<SETTING>``.

    Example:
        >>> LookupSettings(
        ...     milvus_uri="http://milvus:19530", embedding_provider="openai", openai_api_key="sk-x"
        ... ).mode
        'auto'
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=None,
        # Names given in Python are checked by _flattened (a typo names the nearest settings);
        # a LOOKUP_KNOWLEDGE_* variable that is no setting (a process environment has strays, an
        # env file may too) is warned about and ignored, never an error: so "ignore", not "forbid".
        extra="ignore",
        frozen=False,
        validate_assignment=True,
        validate_default=True,  # so a default that disagrees with a given value is caught too
    )

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # repr / str show a URL's user, never its password.
        for name, value in super().__repr_args__():
            yield name, mask_url(value) if name in URL_FIELDS and isinstance(value, str) else value

    @field_serializer(*URL_FIELDS)
    def _mask_url_password(self, value: str | None) -> str | None:
        # model_dump / model_dump_json show a URL's user, never its password.
        return mask_url(value)

    @field_validator(*RULES_OF)
    @classmethod
    def _agrees_with_the_other_settings(cls, value: Any, info: ValidationInfo) -> Any:
        """Check each rule against the settings validated so far (all of them on assignment)."""
        name = str(info.field_name)
        for rule in RULES_OF[name]:
            others = [f for f in rule.fields if f != name]
            if any(f not in info.data for f in others):  # not validated yet (or invalid):
                continue  # checked from the last one's side
            values = {name: value} | {f: info.data[f] for f in others}
            if not rule.holds(*(values[f] for f in rule.fields)):
                named = " and ".join(f"{f}={shown(f, values[f])}" for f in rule.fields)
                raise DisagreementError(f"{named}: {rule.explanation}")
        return value

    if not TYPE_CHECKING:  # type checkers keep the typed signature pydantic gives the class

        def __init__(self, **values: Any) -> None:
            for warning in take_unknown_setting_warnings():  # read with the environment
                logger.warning(warning)
            flat = _flattened(values)
            try:
                super().__init__(**flat)
            except ValidationError as exc:
                raise ConfigurationError(describe(exc, flat)) from exc
            except SettingsError as exc:  # an environment value that is not JSON
                raise ConfigurationError(describe_unparsable(exc)) from exc

        def __setattr__(self, name: str, value: Any) -> None:
            try:
                super().__setattr__(name, value)
            except ValidationError as exc:
                raise ConfigurationError(describe(exc, {name: value})) from exc

        @classmethod
        def model_validate(cls, obj: Any, **kwargs: Any) -> LookupSettings:
            given = _flattened(obj) if isinstance(obj, Mapping) else obj
            try:
                return super().model_validate(given, **kwargs)
            except ValidationError as exc:
                raise ConfigurationError(
                    describe(exc, given if isinstance(given, Mapping) else {})
                ) from exc

    def _view(self, model: type[BaseModel]) -> Any:
        return model.model_construct(**{name: getattr(self, name) for name in model.model_fields})

    @property
    def store(self) -> StoreSettings:
        """The store settings (a read-only view)."""
        return self._view(StoreSettings)

    @property
    def embedding(self) -> EmbeddingSettings:
        """The embedder settings (a read-only view)."""
        return self._view(EmbeddingSettings)

    @property
    def retrieval(self) -> RetrievalSettings:
        """The L0 and L1 settings (a read-only view)."""
        return self._view(RetrievalSettings)

    @property
    def rerank(self) -> RerankSettings:
        """The rerank and context-pack settings (a read-only view)."""
        return self._view(RerankSettings)

    @property
    def decision(self) -> DecisionSettings:
        """The evidence-decision settings (a read-only view)."""
        return self._view(DecisionSettings)

    @property
    def records(self) -> RecordSettings:
        """The invocation-record settings (a read-only view)."""
        return self._view(RecordSettings)

    @property
    def ingest(self) -> IngestSettings:
        """The ingest settings (a read-only view)."""
        return self._view(IngestSettings)

    @property
    def limits(self) -> LimitSettings:
        """The time and size bounds (a read-only view)."""
        return self._view(LimitSettings)

    @property
    def resolved_invocation_db_url(self) -> str:
        """The SQLAlchemy URL for invocation records in force."""
        return self.invocation_db_url or f"sqlite:///{self.data_dir / 'invocations.sqlite3'}"
