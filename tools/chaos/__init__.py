"""Fault injection against two leader-elected operator instances, and the invariants checked after
it from the API server's audit log and the cluster (docs/chaos.md).

Shared by the suite's bounded chaos test (tests/e2e/test_chaos_e2e.py), the deterministic
reproductions of stale views (tests/e2e/test_stale_view_e2e.py) and the longer soak (``make soak``,
``python -m tools.chaos``), so the three check the same things the same way.
"""
