"""Reading what a document points at outside itself: URL sources and the network they may reach.

``fetch`` is the default ``UrlReader`` (http(s) only, bounded in size, time and redirects) and
``addresses`` the policy of which network addresses a URL source may reach. The only I/O of
the transform; the engine sees it through the ``UrlReader`` seam, so tests and the operator can
substitute their own reader.
"""
