"""The persisted types: one definition of everything the operator stores in the cluster.

The inventory item and its phases, the policy enums and the JSON model base live here, below
both ``reconciler`` (which moves inventory items through their phases) and ``api`` (whose CRD
schemas are generated from these very classes). Nothing here talks to a cluster: importing
this package loads pydantic only, never the kubernetes client.
"""
