"""Helpers for the end-to-end browser tests: Debian's chromium, a private JupyterLab, process bookkeeping,
and the one setup every browser test shares (``lab_session``, ``write_notebook``, ``run_cells``).

JupyterLab runs as ``python -m jupyter lab`` with this interpreter, on
127.0.0.1 and a free port, with no token, every Jupyter/IPython directory in a
temporary folder (so no user settings, workspace or runtime file of the
machine gets in, and nothing is left in ``~``) and a ``python3`` kernelspec
that starts this interpreter. Shutdown is SIGTERM (the server then shuts its
kernels down), escalating to SIGKILL; every process seen under the server is
checked to be gone afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Chromium flags that keep it off the (closed) network: see the machine notes.
CHROMIUM_ARGS = [
    "--no-sandbox",  # as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def ensure_chromium() -> str:
    """The path of Debian's chromium, installing it first if it is missing (a missing browser fails, never skips)."""
    found = shutil.which("chromium")
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(sudo + cmd, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"could not install chromium ({' '.join(cmd)}): {done.stderr[-2000:]}")
    found = shutil.which("chromium")
    if not found:
        raise RuntimeError("apt-get installed chromium, but no `chromium` is on PATH")
    return found


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- processes


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of a live process, from /proc; None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """The live processes under ``root`` (itself included): pid -> starttime (to tell a reused pid)."""
    table: dict[int, tuple[int, int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st and st[0] != "Z":
                table[int(entry.name)] = (st[1], st[2])
    found: dict[int, int] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in table and pid not in found:
            found[pid] = table[pid][1]
            todo.extend(child for child, (ppid, _) in table.items() if ppid == pid)
    return found


def alive(procs: dict[int, int]) -> dict[int, int]:
    """Those of ``procs`` (pid -> starttime) still running (a zombie counts as gone)."""
    out = {}
    for pid, start in procs.items():
        st = _stat(pid)
        if st and st[0] != "Z" and st[2] == start:
            out[pid] = start
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


# ---------------------------------------------------------------- JupyterLab


class JupyterLab:
    """A private JupyterLab server; ``start()``, then ``stop()`` (in a ``finally``)."""

    def __init__(self, root: Path, home: Path, port: int | None = None):
        self.root, self.home = root, home
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.log_path = home / "jupyterlab.log"
        self.seen: dict[int, int] = {}  # every process seen under the server: pid -> starttime
        self.escalated: list[str] = []  # what had to be killed

    def env(self) -> dict[str, str]:
        h = self.home
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON"))}
        env.update(
            JUPYTER_CONFIG_DIR=str(h / "config"),  # also Lab's user settings and workspaces
            JUPYTER_DATA_DIR=str(h / "data"),
            JUPYTER_RUNTIME_DIR=str(h / "runtime"),
            JUPYTER_PATH=str(h / "share"),  # first in the data path: our python3 kernelspec wins
            IPYTHONDIR=str(h / "ipython"),
            JUPYTER_PLATFORM_DIRS="0",
            PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]),
            PYTHONUNBUFFERED="1",
        )
        return env

    def _prepare(self) -> None:
        h = self.home
        spec = h / "share" / "kernels" / "python3"
        spec.mkdir(parents=True, exist_ok=True)
        (spec / "kernel.json").write_text(
            json.dumps(
                {
                    "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                    "display_name": "Python 3 (ipykernel)",
                    "language": "python",
                    "metadata": {"debugger": False},
                }
            )
        )
        # This checkout's labextension, ahead of any copy installed in the environment (first on the path wins).
        import jupyter_sandbox

        bundle = Path(jupyter_sandbox.__file__).parent / "labextension"
        link = h / "share" / "labextensions" / "jupyter-sandbox"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(bundle, target_is_directory=True)
        # No news/update toasts over the notebook (and no request for them).
        settings = h / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True})
        )

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--allow-root",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            "--IdentityProvider.token=",
            "--ServerApp.password=",
            f"--ServerApp.root_dir={self.root}",
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
            "--KernelSpecManager.ensure_native_kernel=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--ServerApp.shutdown_no_activity_timeout=600",  # a lost server ends itself
            "--MappingKernelManager.cull_idle_timeout=600",
        ]

    def start(self, timeout: float = 45.0) -> None:
        self._prepare()
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            self.command(),
            cwd=self.root,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        raise RuntimeError(f"jupyter lab did not answer on {self.url}/api in {timeout} s:\n{self.log_tail()}")

    def disable_extension(self, name: str) -> None:
        """``jupyter labextension disable`` in this server's own config folder (``--level=user``: its
        JUPYTER_CONFIG_DIR), never the environment's; the next page load leaves the extension out."""
        self._prepare()
        done = subprocess.run(
            [sys.executable, "-m", "jupyter", "labextension", "disable", "--level=user", name],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"could not disable {name}: {done.stdout}{done.stderr}")

    def get_json(self, path: str):
        with urllib.request.urlopen(f"{self.url}{path}", timeout=10) as r:
            return json.load(r)

    def remember(self) -> None:
        """Note the processes now running under the server (call while kernels are up)."""
        if self.proc is not None:
            self.seen.update(descendants(self.proc.pid))

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self, timeout: float = 15.0) -> dict[int, str]:
        """SIGTERM (kernels are shut down by the server), then SIGKILL; return the processes left (pid -> cmdline)."""
        if self.proc is None:
            return {}
        self.remember()
        pid = self.proc.pid
        if self.proc.poll() is None:
            os.kill(pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.escalated.append(f"jupyter lab {pid} ignored SIGTERM for {timeout} s")
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        # The kernels run in sessions of their own: give them a moment, then kill what is left, one by one.
        deadline = time.monotonic() + 5
        while alive(self.seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        for left, _start in alive(self.seen).items():
            self.escalated.append(f"killed {left}: {cmdline(left)}")
            try:
                os.kill(left, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.2)
        try:  # the server's process group is empty too
            os.killpg(pid, 0)
            group_left = True
        except ProcessLookupError:
            group_left = False
        left = {p: cmdline(p) for p in alive(self.seen)}
        if group_left and not left:
            left[pid] = f"process group {pid} still has members"
        return left


def light_and_dark(page: Any, target: Any, light: Path, dark: Path) -> None:
    """Screenshots of ``target`` (a locator) in JupyterLab's light theme, then its dark one; light again after."""
    target.screenshot(path=str(light))
    for theme, is_light, path in (("JupyterLab Dark", "false", dark), ("JupyterLab Light", "true", None)):
        page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: {theme!r}}})")
        page.wait_for_function(f"() => document.body.dataset.jpThemeLight === {is_light!r}")
        if path is not None:
            time.sleep(0.5)  # the theme's CSS applied to the whole output
            target.screenshot(path=str(path))


def shut_down(lab: JupyterLab, baseline: set[int], browser: Any, pw: Any, ours: dict[int, int]) -> dict[int, str]:
    """Close the browser and playwright, stop ``lab``, and kill whatever this test started that is left (every
    process under this one not in ``baseline``, and under the server: collected into ``ours``); return what was
    left (pid -> cmdline), so a test can fail on it."""
    me = os.getpid()
    ours.update({p: s for p, s in descendants(me).items() if p not in baseline and p != me})
    if browser is not None:
        browser.close()
    if pw is not None:
        pw.stop()
    left = lab.stop()
    ours.update(lab.seen)
    time.sleep(0.2)
    left.update({p: cmdline(p) for p in alive(ours)})
    for pid in left:  # don't leave them to the next test, even when failing
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return left


# -- one test's server, browser and pages ---------------------------------------------------------

SHOTS = Path("/tmp/shots")  # screenshots the browser tests leave for a reader to look at

# The notebook's kernel is idle and its ``%d`` cells are drawn.
KERNEL_IDLE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session && panel.sessionContext.session.kernel;
  return Boolean(kernel && kernel.status === 'idle' && panel.content && panel.content.widgets.length === %d);
}"""

RUN_CELLS = """(indexes) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const run = async () => {
    for (const i of indexes) {
      panel.content.activeCellIndex = i;
      await window.jupyterapp.commands.execute('notebook:run-cell');
    }
  };
  return run();
}"""


def write_notebook(path: Path, sources: list[str]) -> None:
    """A notebook of these code cells, on the ``python3`` kernel the server's kernelspec starts."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(c) for c in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, path)


def run_cells(page: Any, cells: int, *indexes: int, wait: bool = True) -> None:
    """Run these cells in order, as a user selecting each and pressing Shift+Enter would; with ``wait``, until
    each has run and the kernel is idle again (the notebook has ``cells`` cells)."""
    if wait:
        page.evaluate(RUN_CELLS, list(indexes))  # page.evaluate waits for it: each cell has run
        page.wait_for_function(KERNEL_IDLE % cells)
    else:
        page.evaluate(f"(indexes) => {{ ({RUN_CELLS})(indexes); }}", list(indexes))


class LabSession:
    """A private JupyterLab and a headless Chromium, for one test or module (``lab_session`` opens it)."""

    def __init__(self, lab: JupyterLab, browser: Any):
        self.lab, self.browser = lab, browser
        self.page: Any = None  # the page opened last: screenshotted if the test fails
        self.ours: dict[int, int] = {}  # every process the test started (and their children): pid -> starttime

    def open(
        self,
        path: str,
        cells: int,
        *,
        frontend: str = "lab",
        width: int = 1100,
        height: int = 1400,
        timeout_ms: int = 45_000,
        idle_ms: int = 60_000,
    ) -> Any:
        """A new page on the notebook ``path`` in JupyterLab (``frontend="notebook7"``: Notebook 7), once its
        kernel is idle with its ``cells`` cells drawn."""
        page = self.browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(timeout_ms)
        page.goto(self.lab.url + ("/lab/tree/" if frontend == "lab" else "/notebooks/") + path)
        page.wait_for_function(KERNEL_IDLE % cells, timeout=idle_ms)
        self.page = page
        return page


@contextlib.contextmanager
def lab_session(
    root: Path, home: Path, *, expect_ms: int = 45_000, failure_shot: Path | None = None
) -> Iterator[LabSession]:
    """Start JupyterLab on ``root`` and Chromium; stop both after, and fail if a process either started is left.

    A failure inside saves a screenshot of the last page opened (to ``failure_shot``) and prints the server's
    log tail. ``expect_ms``: playwright's ``expect`` timeout meanwhile (its default again after). After the block,
    ``session.ours`` holds every process the test started and ``session.lab.escalated`` whether one needed force."""
    from playwright.sync_api import expect, sync_playwright

    chromium = ensure_chromium()
    SHOTS.mkdir(parents=True, exist_ok=True)
    baseline = set(descendants(os.getpid()))
    lab = JupyterLab(root, home)
    pw = browser = None
    session = LabSession(lab, None)
    try:
        lab.start()
        pw = sync_playwright().start()
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        expect.set_options(timeout=expect_ms)
        session.browser = browser
        yield session
    except BaseException:
        if failure_shot is not None and session.page is not None:
            try:
                session.page.screenshot(path=str(failure_shot))
            except Exception:  # the page may be what broke
                pass
        print(f"\njupyter lab log tail:\n{lab.log_tail()}")
        raise
    finally:
        expect.set_options(timeout=5_000)  # playwright's default, for any later test
        left = shut_down(lab, baseline, browser, pw, session.ours)
    assert not left, f"processes left behind: {left}"
