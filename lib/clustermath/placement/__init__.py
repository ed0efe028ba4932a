"""Chapter 3, "Where the traffic lands": how TP, PP and DP ranks fill NVLink domains, and what each sends.

* ``parallelism``: ``placement`` (which groups and hops stay inside a domain),
  ``tp_group_layout``, ``step_traffic`` (bytes per GPU per step for each kind of
  parallelism) and ``network_traffic`` (what of it crosses the network).

``placement`` shares its name with this package, so the top-level ``clustermath``
does not export it: ``from clustermath.placement import placement``.
"""
from .parallelism import *  # noqa: F401,F403
from .parallelism import __all__ as _parallelism_all

__all__ = [*_parallelism_all]
