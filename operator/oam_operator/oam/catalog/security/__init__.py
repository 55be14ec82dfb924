"""Rules that guard a component: who may reach it, what it may do, how its pods run, and that its
objects outlive a prune.

Traits: ``networkpolicy``, ``cilium-networkpolicy``, ``rbac``, ``security-context``,
``prune-protection``. ``traffic_sources`` synthesises the traffic-source NetworkPolicies the
transform adds once every trait is applied (it is not a trait type itself).
"""
