"""The match stage: the signature catalog, the regex translation and the one-pass engine.

``catalog/`` loads and validates signature records; ``regex/`` translates Python regexes for the
engines (the only code that reads CPython's ``re`` internals); ``engine/`` is the Vectorscan
prefilter, the RE2 confirm step, the compile cache and the ranking; ``authoring/`` holds the tools
for signature authors (lint, explain).
"""
