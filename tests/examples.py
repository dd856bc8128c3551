"""How many examples a property runs: ``scaled(n)`` is ``n`` under the ``ci`` profile, more under ``long``.

A fixed ``max_examples`` would hold a property to its CI budget under every profile, so ``bench/stress``'s
long run (``HYPOTHESIS_PROFILE=long``, 2,000 examples) would explore it no further.
"""

from __future__ import annotations

from hypothesis import settings


def scaled(n: int) -> int:
    """``n`` examples under the ``ci`` profile (100 examples), proportionally more under ``long`` (2,000)."""
    return max(1, round(n * settings.default.max_examples / 100))
