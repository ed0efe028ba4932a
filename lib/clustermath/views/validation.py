"""Chapter 6 ("Do the models hold?"): the validation wing's explorers and figures.

None yet. The package gives every wing a view module (``tests/test_layers.py``);
chapter 6's explorer of ``predict_run`` and its predicted-against-measured
figure belong here.
"""
from __future__ import annotations

__all__: list[str] = []
