"""The one-pass engine: Vectorscan prefilter over a batch, RE2 confirm, compile cache, hazards."""
