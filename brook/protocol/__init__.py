"""Wire protocol: RESP reply encoders and the exact request parser (no I/O here).

Owns: :mod:`~brook.protocol.resp` (replies, RESP2 and RESP3), :mod:`~brook.protocol.requests`
(the exact request parser, Redis's errors), :mod:`~brook.protocol.framing` (whether hiredis
read requests as Redis frames them) and the shortest double text (:mod:`~brook.protocol.grisu`
and its C twin).

Imports: nothing of Brook's (the bottom layer, with :mod:`brook.config` and :mod:`brook.glob`).
"""
