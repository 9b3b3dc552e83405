"""Tools for signature authors: ``catalog lint`` findings and ``explain``."""
