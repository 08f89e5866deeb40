"""Reproducible performance measurements of ai_widgets against the alternatives (``python -m benchmarks``)."""
