"""Rules attached to a component's objects: network, access, security and pruning.

Traits: ``networkpolicy``, ``cilium-networkpolicy``, ``rbac``, ``security-context``,
``prune-protection``. ``traffic_sources`` synthesises the traffic-source NetworkPolicies the
transform adds once every trait is applied (it is not a trait type itself).
"""
