"""A throwaway PostgreSQL cluster: for the suite, bench/stores.py, and tutorial 07 when given no server.

``initdb`` + ``pg_ctl`` in a temporary folder, listening on a unix socket in
that folder only (no port to collide with another test run on the machine).
As root the server runs as the ``postgres`` user (initdb refuses root).
``JUPYTER_SANDBOX_TEST_POSTGRES`` (a URL) skips all this and uses that server.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PostgresCluster", "find_bindir", "with_schema"]


def find_bindir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: PATH, ``pg_config --bindir``, or Debian's layout."""
    candidates = []
    found = shutil.which("pg_ctl")
    if found:
        candidates.append(Path(os.path.realpath(found)).parent)
    if shutil.which("pg_config"):
        try:
            out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10).stdout
            candidates.append(Path(out.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for folder in candidates:
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return folder
    return None


class PostgresCluster:
    """A cluster in a temporary folder; ``url`` once started; ``stop()`` removes it all.

    ``port``: also listen on 127.0.0.1 at that port (the URL then goes over TCP loopback);
    ``durable``: keep fsync and synchronous commits (bench/stores.py), off by default for tests.
    """

    def __init__(self, bindir: Path | None = None, *, port: int | None = None, durable: bool = False):
        found = bindir or find_bindir()
        self.port, self.durable = port, durable
        if found is None:
            raise RuntimeError(
                "PostgreSQL is not installed: no initdb/pg_ctl on PATH, from pg_config, or in "
                "/usr/lib/postgresql/*/bin (apt-get install postgresql)"
            )
        self.bindir: Path = found
        self.root = Path(tempfile.mkdtemp(prefix="jsbx-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.url = ""
        self._user = None
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            self._user = "postgres"
            try:
                entry = pwd.getpwnam(self._user)
            except KeyError as exc:
                raise RuntimeError("running as root needs a 'postgres' user to run the server as") from exc
            os.chown(self.root, entry.pw_uid, entry.pw_gid)

    def _run(self, *argv: str, timeout: float = 120) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self._user:
            command = ["runuser", "-u", self._user, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed ({done.returncode}): {done.stderr.strip()}\n{log[-2000:]}")

    def start(self) -> str:
        user = self._user or pwd.getpwuid(os.geteuid()).pw_name
        self._run("initdb", "-D", str(self.data), "-U", user, "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start_server()
        host = "127.0.0.1" if self.port else self.root
        self.url = f"postgresql://{user}@/postgres?host={host}&port={self.port or 5432}"
        return self.url

    def start_server(self) -> None:
        """Start (or restart) the server on the cluster's folder."""
        # A test server: durability off (the suite tests our transactions, not the disk), room for
        # many connections (several stores and subprocesses per test), and no TCP listener.
        listen = "127.0.0.1" if self.port else "''"
        options = f"-k {self.root} -c listen_addresses={listen} -p {self.port or 5432} -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def stop_server(self) -> None:
        """Stop the server at once (every connection cut), keeping the cluster for ``start_server``."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def with_schema(url: str, schema: str) -> str:
    """``url`` with ``search_path`` set to ``schema`` (libpq ``options``): one store per schema."""
    return f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema}"
