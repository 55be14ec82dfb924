"""Helpers shared by every room: standard library only.

What more than one room needs and no room owns lives here, so that ``oam`` (which must not talk to
a cluster), ``reconciler`` (which must not know OAM) and ``persisted`` (pydantic only) can all use
it. A module here imports nothing but the standard library; ``make lint`` enforces that.
"""
