"""Chapter 6's misconceptions, for the exercises' feedback (``clustermath.feedback``).

None yet. The package gives every wing a feedback module (``tests/test_layers.py``);
the chapter-6 exercises' misconceptions (percent of peak taken for MFU, a bubble
without interleaving, ...) belong here.
"""
from __future__ import annotations

__all__: list[str] = []
