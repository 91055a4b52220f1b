"""A per-case time limit, so that no case can hang the run.

>>> with limit(5):
...     pass
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class CaseTimeout(BaseException):
    """A case ran past its limit (a ``BaseException``, so that no ``except Exception``
    in the code under test swallows it)."""


def _expire(signum: int, frame: FrameType | None) -> None:
    raise CaseTimeout("the case ran past its time limit")


@contextmanager
def limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CaseTimeout` in the block after ``seconds`` (main thread only;
    elsewhere the block runs without a limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
