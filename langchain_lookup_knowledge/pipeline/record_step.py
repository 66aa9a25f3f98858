"""The last step of a lookup: persist the call, then make the graph's output as plain JSON.

The row goes to the recorder's writer (``status: queued``) unless ``record_wait`` asks to wait
for it (``status: ok`` with its ``id``); a recorder that fails costs the row, never the lookup
(``status: error``, and ``row`` when the recorder says what became of it); once a recorder has
dropped rows, ``dropped`` and ``droppedSince`` say how many since when. The recording status,
its time and the whole lookup's (``timingsMs.total``) are written into the result's trace.

Example:
    >>> record_call(None, None, wait=False)
    {'status': 'disabled'}
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import TYPE_CHECKING, Any, cast

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.pipeline.state import ContractJson
from langchain_lookup_knowledge.redaction import describe_exception

if TYPE_CHECKING:
    from langchain_lookup_knowledge.recording import InvocationCall, InvocationRecorder

__all__ = ["final_output", "record_call"]

logger = logging.getLogger(__name__)


def record_call(
    recorder: InvocationRecorder | None, call: InvocationCall | None, *, wait: bool
) -> dict[str, Any]:
    """Record ``call`` (queued unless ``wait``) and say how it went; never raises.

    ``recorder`` or ``call`` ``None``: recording is off (``status: disabled``).
    """
    if recorder is None or call is None:
        return {"status": "disabled"}
    from langchain_lookup_knowledge.recording import QueuedInvocationRecorder

    if "scope" in call and not _takes_scope(type(recorder)):  # a recorder from before it
        call = {k: v for k, v in call.items() if k != "scope"}  # type: ignore[assignment]
    try:
        if not wait and isinstance(recorder, QueuedInvocationRecorder):
            recorder.enqueue(**call)  # the write goes on beside the agent's next step
            status: dict[str, Any] = {"status": "queued"}
        else:
            status = {"status": "ok", "id": recorder.record(**call)}
    except Exception as exc:
        status = {"status": "error", "error": describe_exception(exc)}
        if isinstance(getattr(exc, "row", None), str):  # recording.RecordingNotDone
            status["row"] = exc.row  # type: ignore[attr-defined]
        if status.get("row") != "dropped":  # the recorder logs its drops, a line a minute
            logger.warning("recording the tool invocation failed: %s", describe_exception(exc))
    losses = getattr(recorder, "losses", None)  # rows this recorder dropped, if it counts them
    summary = losses.summary() if losses is not None else None
    return status | summary if summary else status


@functools.cache
def _takes_scope(recorder_type: type) -> bool:
    """Whether ``record`` of ``recorder_type`` takes ``scope`` (by name or ``**kwargs``)."""
    try:
        parameters = inspect.signature(cast(Any, recorder_type).record).parameters.values()
    except (TypeError, ValueError, AttributeError):
        return False
    return any(p.name == "scope" or p.kind is p.VAR_KEYWORD for p in parameters)


def final_output(
    result: LookupResult, status: dict[str, Any], timings: dict[str, float]
) -> ContractJson:
    """The result contract as camelCase JSON, its trace with the recording and ``timings``."""
    trace = result.retrieval_trace.model_copy(update={"recording": status, "timings_ms": timings})
    return result.model_copy(update={"retrieval_trace": trace}).to_json_dict()
