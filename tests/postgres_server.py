"""The suite's throwaway PostgreSQL cluster: ``jupyter_sandbox.stores.pgcluster`` (shipped: tutorial 07 starts one)."""

from jupyter_sandbox.stores.pgcluster import PostgresCluster, find_bindir, with_schema

__all__ = ["PostgresCluster", "find_bindir", "with_schema"]
