"""Where a table line too long for a chunk may be cut: between its cells, and quickly for a
line that only looks like an output table's border."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.knowledge.blocks import cell_boundaries


def test_a_border_is_cut_before_its_plus_signs():
    border = "+------+-------+---+"
    assert [border[:i] for i in cell_boundaries(border, 0, len(border))] == [
        "+------",
        "+------+-------",
    ]


@pytest.mark.timeout(30)
def test_a_long_run_of_dashes_that_is_no_border_is_read_in_linear_time():
    # A quadratic reading of this line (a regex with two ways to place its first dash) takes
    # minutes; a linear one, milliseconds.
    line = "+" + "-" * 200_000 + "x"
    assert cell_boundaries(line, 0, len(line)) == []
