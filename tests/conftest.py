"""Shared fixtures: a Sandbox on an in-memory store, one on a file, a manual clock."""

from __future__ import annotations

import itertools
import os

import pace  # the machine's pace, measured as the run starts (tests/pace.py)
import pytest
from hypothesis import HealthCheck, settings

from jupyter_sandbox import ManualClock, Sandbox

# Properties over generated inputs: CI runs a bounded, reproducible profile;
# ``--hypothesis-profile=long`` (bench/stress) runs many more examples.
settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long", max_examples=2_000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("dev", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_report_header(config):
    return f"pace: this machine runs {pace.SLOWDOWN:.2f}x slower than idle; waits are bounded accordingly"


def pytest_generate_tests(metafunc):
    # The conformance suite: a module that sets ``BOTH_BACKENDS = True`` runs each test taking ``sb`` (or a
    # fixture built on it) on SQLite and on PostgreSQL; under CI=true a missing PostgreSQL fails, not skips.
    if "backend" in metafunc.fixturenames and getattr(metafunc.module, "BOTH_BACKENDS", False):
        metafunc.parametrize("backend", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def backend(request):
    """The store under ``sb``: ``sqlite`` (in memory), or in a conformance module ``postgres`` too."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def new_sandbox(backend, request):
    """Makes Sandboxes (``new_sandbox(clock=...)``) on the store under test; each is closed after the test."""
    made: list[Sandbox] = []

    def make(**options):
        store = request.getfixturevalue("postgres_url") if backend == "postgres" else ":memory:"
        made.append(Sandbox(store, **options))
        return made[-1]

    yield make
    for sandbox in made:
        sandbox.close()


@pytest.fixture
def sb(new_sandbox):
    return new_sandbox()


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "runs.sqlite"


@pytest.fixture
def clock():
    return ManualClock(start=1_700_000_000_000)


@pytest.fixture
def counted(sb):
    """A sandbox with a side-effecting action that counts its calls: ``counted.calls``."""
    calls: list = []

    @sb.action
    def record(value):
        calls.append(value)
        return {"recorded": value}

    sb.calls = calls
    return sb


# -- PostgreSQL: one throwaway cluster per session (tests/postgres_server.py), one fresh schema per test ------


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory):
    """One mypy cache for the session's type-checked snippets (``typecheck.flagged_lines``)."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL server: ``JUPYTER_SANDBOX_TEST_POSTGRES``, else a cluster started here.

    Without PostgreSQL the Postgres half of the suite is skipped, except under
    ``CI=true``, where it fails: CI must test both backends.
    """
    from postgres_server import PostgresCluster

    given = os.environ.get("JUPYTER_SANDBOX_TEST_POSTGRES")
    if given:
        yield given
        return
    try:
        import psycopg  # noqa: F401

        cluster = PostgresCluster()
        cluster.start()
    except Exception as exc:  # not installed, or the server would not start: say which
        if _in_ci():
            pytest.fail(f"CI must test PostgreSQL, but it is not usable here: {exc}")
        pytest.skip(f"PostgreSQL is not usable here: {exc}")
    try:
        yield cluster.url
    finally:
        try:
            _close_leftover_stores()
        finally:
            cluster.stop()  # even when a half-open store would not close: no server outlives the session


def _close_leftover_stores() -> None:
    """Close the stores tests left open, so their pools do not try to reconnect to a stopped server."""
    import gc

    from psycopg_pool import ConnectionPool

    from jupyter_sandbox.stores.postgres import PostgresStore

    for obj in gc.get_objects():
        if isinstance(obj, PostgresStore):
            obj.close()
        elif isinstance(obj, ConnectionPool) and not obj.closed:
            obj.close()


def _new_schema(server: str) -> str:
    import psycopg
    from postgres_server import with_schema

    schema = f"t{os.getpid()}_{next(_SCHEMAS)}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    _CREATED.append((server, schema))
    return with_schema(server, schema)


_SCHEMAS = itertools.count()
_CREATED: list[tuple[str, str]] = []


@pytest.fixture
def postgres_url(postgres_server):
    """A URL whose ``search_path`` is a schema of its own: an empty store for this test."""
    yield _new_schema(postgres_server)
    _drop_schemas()


def _drop_schemas() -> None:
    """On someone else's server (``JUPYTER_SANDBOX_TEST_POSTGRES``), leave no schema behind."""
    import psycopg

    while _CREATED:
        server, schema = _CREATED.pop()
        if os.environ.get("JUPYTER_SANDBOX_TEST_POSTGRES"):
            with psycopg.connect(server, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def own_server(postgres_server):
    """A cluster of this test's own, to stop and start (the session's serves every other test)."""
    from postgres_server import PostgresCluster

    # durable: an immediate stop is a crash, and the session's cluster (no fsync, asynchronous commits)
    # may lose the last commits in one, as any server configured so would
    with PostgresCluster(durable=True) as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request, tmp_path):
    """The store every conformance test runs on: an SQLite file, then a PostgreSQL schema."""
    if request.param == "sqlite":
        return str(tmp_path / "runs.sqlite")
    return request.getfixturevalue("postgres_url")


@pytest.fixture(params=["sqlite", "postgres"])
def new_store(request, tmp_path):
    """Makes empty stores on one backend: each ``new_store()`` is a fresh SQLite file or PostgreSQL schema."""
    count = itertools.count()
    if request.param == "sqlite":
        yield lambda: str(tmp_path / f"runs{next(count)}.sqlite")
        return
    server = request.getfixturevalue("postgres_server")
    yield lambda: _new_schema(server)
    _drop_schemas()
