"""Go- and kurel-compatible output: values in messages, quantities, durations, the YAML emitter.

Byte compatibility with ``kurel build`` lives here and nowhere else: ``gofmt`` (Go's ``%q``/``%v``
spellings used in every message), ``quantity`` (canonical resource quantities), ``duration``
(Go's duration printing and error texts, over the project's one parser in
``oam_operator.common.durations``) and ``serialize`` (the deterministic YAML emitter of ``build``).
Nothing here knows about documents or handlers.
"""
