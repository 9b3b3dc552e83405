"""Python regex to engine syntax: parse with CPython's own parser, write RE2 and Vectorscan forms."""
