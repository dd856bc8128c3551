"""The MCP servers' processes: none outlives ``close()``, a timeout, or this process.

Every server is started through ``ServerProcess.watched``: a small program run first in the server's
process writes its id to a file (the SDK's transport does not expose the process) and, on Linux, asks the
kernel to kill it when the thread that started it ends. ``ServerProcess.kill`` stops a server by the id it
read back, and every server still running when this process exits is killed then.

>>> process = ServerProcess()
>>> process.watched(["server"])[-1], process.pids
('server', [])
>>> process.forget()
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import tempfile

__all__ = ["ServerProcess"]

_LIVE: set[int] = set()  # every server process started here and not yet seen stopped


def _is_our_live_child(pid: int) -> bool:
    """Whether ``pid`` is still a running child of this process (a reaped one's id may belong to another)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
    except OSError:
        return not os.path.isdir("/proc") and pid in _LIVE  # no /proc: trust the record
    return int(ppid) == os.getpid() and state not in ("Z", "X")


def _kill(pids: list[int]) -> None:
    """Kill each server's process group (the SDK starts each in a session of its own)."""
    for pid in pids:
        if _is_our_live_child(pid):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        _LIVE.discard(pid)


@atexit.register
def _kill_all() -> None:
    _kill(sorted(_LIVE))


# Run first in a server's process: it writes its process id to a file (the SDK's transport does not expose the
# process), so a server that ignores the SDK's shutdown is killed by its id. On Linux the kernel also kills it
# when the thread that started it ends (the thread of the loop its session lives on, which lives as long as
# this process), so not even a SIGKILL of this process leaves a server behind (one that hangs would not notice
# its stdin closing). Then it becomes the server (execvp): the same process.
_WATCHED = (
    "import os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes\n"
    "    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL\n"
    "os.getppid() == int(sys.argv[1]) or os._exit(1)  # the parent was gone before that\n"
    "with open(sys.argv[2], 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "os.execvp(sys.argv[3], sys.argv[3:])\n"
)


class ServerProcess:
    """One server process to start: the file it writes its id to, and that id once it has."""

    def __init__(self) -> None:
        fd, self.pid_file = tempfile.mkstemp(prefix="mcp-", suffix=".pid")  # its server writes its id there
        os.close(fd)
        self._pids: list[int] = []

    def watched(self, command: list[str]) -> list[str]:
        """The command, started so that it records its process id and (on Linux) dies with this process."""
        if sys.platform == "win32":  # no exec there: the SDK's own job object stops the server
            return command
        return [sys.executable, "-S", "-c", _WATCHED, str(os.getpid()), self.pid_file, *command]

    @property
    def pids(self) -> list[int]:
        """Its server's process id, once the server has written it (an empty list before)."""
        if not self._pids:
            try:
                with open(self.pid_file, encoding="ascii") as f:
                    text = f.read().strip()
            except OSError:
                text = ""
            if text.isdigit():
                self._pids.append(int(text))
                _LIVE.add(int(text))
                try:
                    os.unlink(self.pid_file)
                except OSError:
                    pass
        return self._pids

    def kill(self) -> None:
        """Kill its server, if it is still running (a server that ignored the SDK's shutdown, or hangs)."""
        _kill(self.pids)

    def forget(self) -> None:
        """Remove the id file, if the server never read back its id (it did not start, or not that far)."""
        try:
            os.unlink(self.pid_file)
        except OSError:
            pass
