"""The suite's throwaway PostgreSQL cluster: ``jupyter_sandbox.stores.pgcluster`` (shipped, so tutorial 07 can start one)."""

from jupyter_sandbox.stores.pgcluster import PostgresCluster, find_bindir, with_schema

__all__ = ["PostgresCluster", "find_bindir", "with_schema"]
