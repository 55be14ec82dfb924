"""Health by expression (docs/health.md)."""
