"""The pass and its rules (docs/architecture.md#the-two-layers-of-controller).

One pass of an Application, read top to bottom in ``passes.py``: the checks and the pass's own
steps (``checks.ORDER``), the reconciler it drives, the status writer's one epilogue, and the
small rules they apply. The seam types (``seams.py``) are at the bottom. Nothing here outlives
a pass or imports kopf, and nothing here imports ``controller.service``.
"""
