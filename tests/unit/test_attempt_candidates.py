"""An attempt's candidates name it: the built-in paths make them so (no copy per candidate in
the lookup), and a path whose candidates do not (or that hands out candidates it keeps) gets
copies that do, its own left as they were (issue 29)."""

from __future__ import annotations

from langchain_lookup_knowledge.pipeline.attempts import run_attempt
from langchain_lookup_knowledge.pipeline.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.pipeline.plan import AttemptSpec, plan_query
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.settings import LookupSettings

SETTINGS = LookupSettings(l1_enabled=True)
LABEL = ScoreLabel(path="sdk", metric="COSINE", raw=0.8, similarity=0.9, formula="(s+1)/2")


def _hit(attempt: str = "") -> Candidate:
    return Candidate(
        evidence_key="a.md#0", source="a.md", content="x", rank=1, score_label=LABEL,
        attempt=attempt,
    )  # fmt: skip


class _Paths:
    """A path provider whose one path answers with ``make(request)``."""

    def __init__(self, make):
        self.settings = SETTINGS
        self.make = make
        self.requests: list[SearchRequest] = []

    def path(self, name: str):
        return self

    def search(self, request: SearchRequest) -> list[Candidate]:
        self.requests.append(request)
        return self.make(request)


def _run(paths: _Paths, name: str = "filtered"):
    plan = plan_query("etcd is slow", SETTINGS, vector=[0.1, 0.2])
    return run_attempt(paths, plan, AttemptSpec(name, None), [0.1, 0.2], "sdk", None)


def test_the_request_names_its_attempt_and_its_named_candidates_are_kept_as_made():
    made: list[Candidate] = []

    def make(request: SearchRequest) -> list[Candidate]:
        made[:] = [_hit(request.attempt)]
        return list(made)

    paths = _Paths(make)
    outcome = _run(paths, "unfiltered_retry")
    assert paths.requests[0].attempt == "unfiltered_retry"
    assert outcome.candidates[0] is made[0]
    assert outcome.candidates[0].attempt == "unfiltered_retry"


def test_candidates_that_do_not_name_the_attempt_are_copied_and_theirs_left_unchanged():
    kept = _hit()  # a path that keeps its candidates (a cache) and ignores the attempt
    outcome = _run(_Paths(lambda request: [kept]), "filtered")
    assert outcome.candidates[0].attempt == "filtered"
    assert outcome.candidates[0] is not kept
    assert kept.attempt == ""
    assert (
        outcome.candidates[0].model_dump()
        == kept.model_copy(update={"attempt": "filtered"}).model_dump()
    )
