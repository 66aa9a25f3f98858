"""A value reloaded in the background: readers never wait for a reload.

The first read loads the value (there is nothing to answer with before). After that, a read of a
value older than its TTL starts one reload in a daemon thread and returns the current value at
once; the reload's result replaces it in one assignment. A reload that fails keeps the current
value (logged) and is tried again on a later read.

Example:
    >>> counter = iter(range(100))
    >>> value = Refreshing(lambda previous: next(counter), ttl_s=lambda: 3600.0, name="demo")
    >>> value.get(), value.get()
    (0, 0)
    >>> value.reload_now()
    1
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

Value = TypeVar("Value")


class Refreshing(Generic[Value]):
    """``load(previous)`` once, then again in the background when older than ``ttl_s()``.

    ``load`` receives the current value (``None`` on the first load) and may return it as it
    is when nothing changed, so an unchanged source costs no second copy.
    """

    def __init__(
        self, load: Callable[[Value | None], Value], ttl_s: Callable[[], float], name: str
    ) -> None:
        self._load = load
        self._ttl_s = ttl_s
        self._name = name
        self._value: Value | None = None
        self._loaded_at = 0.0
        self._first_load = threading.Lock()  # concurrent first reads make one load
        self._state = threading.Lock()  # held for assignments only, never during a load
        self._reloading: threading.Thread | None = None

    def get(self) -> Value:
        """The current value; starts a background reload when it is older than the TTL."""
        value = self._value
        if value is None:
            return self._load_first()
        if time.monotonic() - self._loaded_at > self._ttl_s():
            self._start_reload()
        return value

    def peek(self) -> Value | None:
        """The value loaded so far, if any; never loads and never waits."""
        return self._value

    def _load_first(self) -> Value:
        with self._first_load:
            value = self._value
            if value is None:
                value = self._load(None)
                with self._state:
                    self._value, self._loaded_at = value, time.monotonic()
            return value

    def _start_reload(self) -> None:
        with self._state:
            if self._reloading is not None and self._reloading.is_alive():
                return
            thread = threading.Thread(
                target=self._reload, name=f"lookup-reload-{self._name}", daemon=True
            )
            self._reloading = thread
        thread.start()

    def _reload(self) -> None:
        try:
            value = self._load(self._value)
        except Exception as exc:  # the current value keeps serving; tried again later
            logger.warning("%s reload failed, the loaded one kept: %s", self._name, exc)
            with self._state:
                self._loaded_at = time.monotonic()
            return
        with self._state:
            self._value, self._loaded_at = value, time.monotonic()

    def reload_now(self) -> Value:
        """Load again in the caller's thread and replace the value (readers keep the current
        one meanwhile); a failure raises and forgets the value (the next read loads it)."""
        try:
            value = self._load(self._value)
        except Exception:
            self.forget()
            raise
        with self._state:
            self._value, self._loaded_at = value, time.monotonic()
        return value

    def forget(self) -> None:
        """Drop the value: the next read loads it again (and waits for that load)."""
        with self._state:
            self._value, self._loaded_at = None, 0.0

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait for a background reload in progress to end; whether none is running."""
        thread = self._reloading
        if thread is not None:
            thread.join(timeout_s)
            return not thread.is_alive()
        return True
