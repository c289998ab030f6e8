"""Exchange: the gateway as an iLEAP / PACT host system (docs/ileap.md).

``footprints`` and ``tad`` map a pack's iLEAP document to PACT ProductFootprints and iLEAP
Transport Activity Data (pure functions); ``auth`` issues and checks the recipients' access
tokens; ``host`` reads what a recipient may see; ``routes`` is the HTTP transport with the
specifications' own error bodies.
"""
