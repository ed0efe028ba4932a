"""Chapter 5, "Scale-up domains that survive faults": fragmentation, the K-hop ring, the optical link.

* ``domains``: fragmentation of a domain by faults, node and GPU fault rates,
  the K-hop ring's waste bound, ToR wiring, the synthetic fault trace, and the
  optical switch's link budget;
* ``ring_builder``: the K-hop ring builder under random node faults, against
  static rings and switch domains.
"""
from .domains import *  # noqa: F401,F403
from .domains import __all__ as _domains_all
from .ring_builder import *  # noqa: F401,F403
from .ring_builder import __all__ as _ring_builder_all

__all__ = [*_domains_all, *_ring_builder_all]
