"""The object reconciler: applies, prunes and deletes objects with an inventory. No kopf."""
