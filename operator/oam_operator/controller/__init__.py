"""The kopf driver: Application → transform → reconciler → status.

With it live the operator's own settings (``settings``), Prometheus metrics (``metrics``) and
logging set-up (``logs``). This ``__init__`` imports nothing, so the command line can read the
settings without loading kopf.
"""
