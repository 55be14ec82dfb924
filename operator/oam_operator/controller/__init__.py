"""The kopf driver: Application → transform → reconciler → status."""
