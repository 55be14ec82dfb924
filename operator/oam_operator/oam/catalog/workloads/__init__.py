"""Workload component types and the pod specs they share.

Types: ``webservice``, ``worker``, ``statefulset``, ``daemonset``, ``cronjob``; the traits that
decorate a workload: ``scaler`` (HPA, PDB) and ``configmap``. ``workload`` holds the shared
properties and objects; the pod-spec parts each have a module (``containers``, ``deployment``,
``env``, ``image``, ``probes``, ``resources``, ``scheduling``, ``security``, ``volumes``,
``values``, ``schemas``), and ``pod_specs`` finds pod specs in generated objects for
decorating traits.
"""
