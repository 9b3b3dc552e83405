"""Grouping: what makes two lines the same failure (templates and fingerprints)."""
