"""The machinery that outlives a pass (docs/architecture.md#the-two-layers-of-controller).

The kopf handlers and the scheduler of the Application loops, the queues and the limiter of
passes, leader election and its fence, the watches of owned objects and of grants, the
connections to remote clusters, the admission webhook and its certificates, metrics and logs.
It runs passes of ``controller.reconcile``; that layer never imports this one.
"""
