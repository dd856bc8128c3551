"""A peer process on a shared store, driven one JSON line at a time (``signal_peer.py``, ``decision_peer.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pace import bound

ROOT = Path(__file__).resolve().parent.parent
HANG = bound(40.0)  # seconds that only bound a hang


class Peer:
    """``python tests/SCRIPT ARGS...`` with this checkout first on its path: commands in, JSON lines out."""

    def __init__(self, script: str, *args: str):
        env = {**os.environ, "PYTHONPATH": f"{ROOT / 'tests'}{os.pathsep}{ROOT}"}
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def send(self, **command) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def answer(self):
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the peer process ended (exit {self.proc.poll()})"
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(HANG)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
