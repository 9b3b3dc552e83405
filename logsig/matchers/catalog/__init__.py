"""Signature catalog: files to validated records, capture names to base-unit values, the built-in catalog."""
