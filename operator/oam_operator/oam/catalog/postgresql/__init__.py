"""The ``postgresql`` component type: a CloudNativePG cluster and the objects beside it.

``schema`` (its properties), ``cluster`` (the blocks of the ``Cluster`` spec), ``resources``
(CPU and memory) and ``objects`` (what is added beside the Cluster).
"""
