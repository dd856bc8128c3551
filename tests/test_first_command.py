"""The README's first command sets up everything the tutorials use, and starts JupyterLab as root too.

The command is read from the README itself. Its set-up part (everything before
``jupyter lab``) runs, as written, in a copy of the repository's tracked files,
so it makes a fresh ``.venv`` there with pip (its cache and the package
registry, nothing else). Every tutorial, 01 to 08, then runs top to bottom in a
kernel of that venv: a tutorial importing what the command did not install
fails here, and so does one that leaves a file beside it (its store aside).
They run under ``pytest --nbval-lax``, so the outputs each tutorial marks as
checked (``# NBVAL_CHECK_OUTPUT``) must still match the saved ones after
``notebooks/nbval_sanitize.cfg`` has replaced what varies (run ids). Tutorial
07 is the exception: its checked outputs need the suite's PostgreSQL server,
so here it only runs, and ``test_team_notebook.py`` checks it on that server.
Then the launch part starts JupyterLab from that venv (with ``--no-browser``
and a free port added): as root it must come up, not refuse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from browser_support import free_port
from nbclient import NotebookClient
from tutorials import checks_an_output, run_under_nbval

pytestmark = [pytest.mark.kernel, pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = sorted(p.name for p in (ROOT / "notebooks").glob("0[1-8]-*.ipynb"))
ON_THE_TEAM_SERVER = ["07-team.ipynb"]


def first_command() -> tuple[str, str]:
    """The README's first shell command, split into its set-up part and its ``jupyter lab`` launch."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert block, "the README opens with no bash block"
    command = next(line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#"))
    setup, sep, launch = command.rpartition(" && .venv/bin/jupyter lab ")
    assert sep, f"the first command does not end by starting JupyterLab: {command}"
    return setup, ".venv/bin/jupyter lab " + launch


def copy_of_the_repository(target: Path) -> set[str]:
    """The tracked files, copied; their names."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = {name for name in tracked.decode().split("\0") if name and (ROOT / name).is_file()}
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    return names


def test_the_readmes_first_command_installs_what_every_tutorial_uses_and_starts_lab(tmp_path):
    assert len(TUTORIALS) == 8, TUTORIALS
    setup, launch = first_command()
    repo = tmp_path / "repo"
    tracked = copy_of_the_repository(repo)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(["bash", "-c", setup], cwd=repo, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    python = repo / ".venv" / "bin" / "python"
    assert python.exists()

    # A kernelspec of the fresh venv, found first.
    home = tmp_path / "home"
    spec = home / "share" / "kernels" / "fresh"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "fresh", "language": "python"}))
    jupyter_env = {
        "JUPYTER_PATH": str(home / "share"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "0",
    }
    saved = {k: os.environ.get(k) for k in (*jupyter_env, "PYTHONPATH")}
    os.environ.update(jupyter_env)
    os.environ.pop("PYTHONPATH", None)  # the kernel imports the copy installed in the venv, nothing else
    try:
        checked = [name for name in TUTORIALS if name not in ON_THE_TEAM_SERVER]
        assert [name for name in checked if not checks_an_output(repo / "notebooks" / name)] == []
        run_under_nbval(repo / "notebooks", checked, kernel="fresh", env={**env, **jupyter_env})
        for name in ON_THE_TEAM_SERVER:
            path = repo / "notebooks" / name
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(
                nb, kernel_name="fresh", timeout=600, resources={"metadata": {"path": str(path.parent)}}
            )
            client.execute()  # a cell that raises fails the test, naming it
        # The tutorials leave nothing beside them but their stores (.sandbox/).
        left = {
            str(p.relative_to(repo))
            for p in (repo / "notebooks").rglob("*")
            if p.is_file() and ".sandbox" not in p.parts and str(p.relative_to(repo)) not in tracked
        }
        assert not left, f"the tutorials left files behind: {sorted(left)}"
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    # The launch part, as root too: JupyterLab answers instead of refusing to run.
    port = free_port()
    lab_env = {**env, **jupyter_env, "BROWSER": "true"}
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {launch} --no-browser --port={port} --ServerApp.port_retries=0"],
        cwd=repo,
        env=lab_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120  # bounds a hang only
        up = False
        while time.monotonic() < deadline and proc.poll() is None and not up:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2) as r:
                    up = r.status == 200
            except OSError:
                time.sleep(0.3)
        log = "" if up else (proc.stdout.read().decode(errors="replace") if proc.poll() is not None else "")
        assert up, f"jupyter lab did not start (uid {os.getuid()}): {log[-3000:]}"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
