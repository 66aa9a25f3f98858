"""Subcommands that live in their own modules (compare, eval, bench), registered lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def register_extra_commands() -> list[Callable[[Any], None]]:
    """Each function adds one subcommand to the ``lookup-knowledge`` parser."""
    registrars: list[Callable[[Any], None]] = []
    from langchain_lookup_knowledge.evaluation.commands import register_eval_commands

    registrars.append(register_eval_commands)
    from langchain_lookup_knowledge.compare import register_compare_command

    registrars.append(register_compare_command)
    return registrars
