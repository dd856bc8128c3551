"""Who owns the engine's loop: the Sandboxes holding it. The last one closed stops every thread it started.

Each check runs in a fresh interpreter, so no Sandbox another test left open keeps the loop alive.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jupyter_sandbox import Sandbox
from jupyter_sandbox.errors import StoreError

# The threads alive before the package is imported (the main one): what a closed Sandbox must leave behind, no
# more. Importing the package and running scripts start none that outlive it (not the quickjs wrapper's worker).
BEFORE = """
import threading
BEFORE = sorted(t.name for t in threading.enumerate())
import jupyter_sandbox
"""
# Threads left after the script closed its Sandboxes: it waits (bounded only against a hang) for the action
# pool's idle threads, which end on their own once shut down, then prints the names of the new ones alive.
LEFT = """
import json, time
new = lambda: sorted(t.name for t in threading.enumerate() if t.name not in BEFORE)
deadline = time.monotonic() + 60
while new() and time.monotonic() < deadline:
    time.sleep(0.01)
print(json.dumps(new()))
"""


def threads_left(script: str) -> list[str]:
    """The threads a script (run in a fresh interpreter) leaves running that were not there at import."""
    code = BEFORE + textwrap.dedent(script) + LEFT
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_closing_the_last_sandbox_leaves_no_engine_action_or_helper_thread_running():
    left = threads_left(
        """
        from jupyter_sandbox import Sandbox
        sb = Sandbox()
        sb.action(lambda n: n + 1, name="inc")
        sb.action(lambda n: sb.eval("return await actions.inc(ctx.input)", n).output, name="nested")
        sb.action(lambda n: n * 2, name="slow", timeout=30)  # a timeout: it runs on an action thread
        run = sb.eval("return [await actions.nested(1), await actions.slow(2)]")
        assert run.output == [2, 4], run.output
        sb.start_scheduler(0.05)
        sb.close()
        """
    )
    assert left == []


def test_importing_the_package_its_realm_and_its_card_renderer_starts_no_thread():
    left = threads_left(
        """
        import jupyter_sandbox.engine.realm, jupyter_sandbox.notebook.card_html
        from jupyter_sandbox import Sandbox
        with Sandbox() as sb:
            assert sb.eval("return 1").output == 1
        """
    )
    assert left == []


def test_the_loop_runs_until_the_last_of_several_sandboxes_closes():
    left = threads_left(
        """
        import threading
        from jupyter_sandbox import Sandbox
        engine = lambda: [t for t in threading.enumerate() if t.name == "jupyter-sandbox-engine"]
        first, second = Sandbox(), Sandbox()
        first.eval("return 1")
        first.close()
        assert second.eval("return 2").output == 2  # still served: the second holds the loop
        assert len(engine()) == 1
        second.close()
        assert engine() == [], engine()
        third = Sandbox()  # a fresh loop for the next one
        assert third.eval("return 3").output == 3
        third.close()
        """
    )
    assert left == []


@pytest.mark.slow
def test_closing_a_sandbox_with_an_mcp_server_leaves_no_thread_and_no_server_process(tmp_path):
    server = Path(__file__).parent / "mcp_servers" / "files.py"
    left = threads_left(
        f"""
        import os, sys
        from jupyter_sandbox import Sandbox
        sb = Sandbox()
        sb.mcp("files", [sys.executable, {str(server)!r}, "files"], approval=False)
        target = {str(tmp_path / "a.txt")!r}
        sb.eval("return await actions.files.write_file({{path: ctx.input, text: 'hi'}})", target)
        [pid] = sb.mcp_servers["files"]._conn.pids
        sb.close()
        import time
        deadline = time.monotonic() + 60  # bounds a hang only: a killed server is gone at once
        while True:
            try:
                os.waitpid(pid, os.WNOHANG)  # reap it if nothing else has (a zombie still answers kill 0)
                os.kill(pid, 0)
            except (ChildProcessError, ProcessLookupError):
                break
            assert time.monotonic() < deadline, f"the server {{pid}} outlived close()"
            time.sleep(0.01)
        """
    )
    assert left == []


def test_a_closed_sandbox_refuses_work_with_a_store_error():
    sb = Sandbox()
    sb.close()
    with pytest.raises(StoreError, match="closed"):
        sb.eval("return 1")


def test_closing_a_sandbox_twice_gives_its_hold_back_once():
    holder, other = Sandbox(), Sandbox()
    try:
        other.close()
        other.close()  # a second release would stop the loop under the holder
        assert holder.eval("return 1").output == 1
    finally:
        holder.close()
