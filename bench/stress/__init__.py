"""The adversarial stress run (``python -m bench.stress``), one module per section.

``cases`` generates bad input as plain data; ``mutations`` builds the bad sources, call logs and store
files a case names; ``worker`` runs cases in a subprocess; ``fuzz`` feeds the workers; ``faults``,
``concurrency``, ``escapes`` and ``properties`` are the other sections; ``__main__`` is the command
line and the summary. Each section module has ``run(args, log)`` and ``report(result, args)``.
The test suite reuses the generators and fixtures re-exported here (``tests/stress_module.py``).
"""

from bench.stress import common  # noqa: F401  (first: puts this checkout first on sys.path)
from bench.stress.cases import (
    CALL_LOG_TEMPLATE,
    DEEP_RECURSION,
    HELPERS,
    INFINITE_LOOPS,
    MEMORY_BOMBS,
    NEVER_SETTLE,
    WEIGHTS,
    make_case,
    py_value,
)
from bench.stress.concurrency import CONC_SOURCE, PROC_CHILD, journal_complete, register_conc_actions
from bench.stress.faults import kill_trial
from bench.stress.fuzz import run_fuzz
from bench.stress.worker import register_actions

__all__ = [
    "CALL_LOG_TEMPLATE",
    "CONC_SOURCE",
    "DEEP_RECURSION",
    "HELPERS",
    "INFINITE_LOOPS",
    "MEMORY_BOMBS",
    "NEVER_SETTLE",
    "PROC_CHILD",
    "WEIGHTS",
    "journal_complete",
    "kill_trial",
    "make_case",
    "py_value",
    "register_actions",
    "register_conc_actions",
    "run_fuzz",
]
