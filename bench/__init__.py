"""Measurements of this checkout: ``bench/bench.py`` (speed) and ``bench/stress/`` (reliability)."""
