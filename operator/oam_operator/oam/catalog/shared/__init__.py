"""Building blocks more than one catalog family uses.

``static`` (a config whose objects are known when it is built), ``trait_kit`` (sub-applications
and decoration shared by the traits) and ``typed_props`` (typed reads of authored properties for
helm, oci and postgresql).
"""
