"""Grading feedback: match a wrong answer to the mistake that produces it.

``core`` holds the matching machinery (``expect``, ``suspect``, ``reject`` ...);
each other module is one chapter's catalogue of misconceptions, registered on
import. Importing this package registers every chapter's catalogue, so a test
needs only ``from clustermath import feedback as fb``.

Layer rule (enforced by ``tests/test_layers.py``): feedback imports models
only, never views, ipywidgets or matplotlib.
"""
from .core import *  # noqa: F401,F403  (the public API: expect, suspect, ...)
from .core import __all__
from . import peak, reliability, placement, fabric_designs, scaleup, validation  # noqa: F401  (register the catalogues)
