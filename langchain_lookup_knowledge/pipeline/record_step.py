"""The last step of a lookup: persist the call, then make the graph's output as plain JSON.

The row goes to the recorder's writer (``status: queued``) unless ``record_wait`` asks to wait
for it (``status: ok`` with its ``id``); a recorder that fails costs the row, never the lookup
(``status: error``, and ``row`` when the recorder says what became of it). The recording status,
its time and the whole lookup's (``timingsMs.total``) are written into the result's trace.

Example:
    >>> record_call(None, None, wait=False)
    {'status': 'disabled'}
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

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

    try:
        if not wait and isinstance(recorder, QueuedInvocationRecorder):
            recorder.enqueue(**call)  # the write goes on beside the agent's next step
            return {"status": "queued"}
        return {"status": "ok", "id": recorder.record(**call)}
    except Exception as exc:
        logger.warning("recording the tool invocation failed: %s", describe_exception(exc))
        status: dict[str, Any] = {"status": "error", "error": describe_exception(exc)}
        if isinstance(getattr(exc, "row", None), str):  # recording.RecordingNotDone
            status["row"] = exc.row  # type: ignore[attr-defined]
        return status


def final_output(
    result: LookupResult, status: dict[str, Any], timings: dict[str, float]
) -> ContractJson:
    """The result contract as camelCase JSON, its trace with the recording and ``timings``."""
    trace = result.retrieval_trace.model_copy(update={"recording": status, "timings_ms": timings})
    return result.model_copy(update={"retrieval_trace": trace}).to_json_dict()
