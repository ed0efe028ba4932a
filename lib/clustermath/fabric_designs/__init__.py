"""Chapter 4, "Designs compared": five published fabrics on four axes, and how to choose.

* ``designs``: the comparison matrix as data, each design's scale units, Clos
  tiers and ports, the rail-only Table II and the spine's cost;
* ``incast``: switch buffers, an N-to-1 incast and the DCQCN marking bound;
* ``load_balance``: hashing few large flows onto equal uplinks, and polarisation;
* ``redundancy``: slices and spare cubes, uplink headroom, the dual ToR, the
  interruption budget, what one failure costs each design;
* ``choice``: the decision procedure as explicit, scored rules.
"""
from .designs import *  # noqa: F401,F403
from .designs import __all__ as _designs_all
from .incast import *  # noqa: F401,F403
from .incast import __all__ as _incast_all
from .load_balance import *  # noqa: F401,F403
from .load_balance import __all__ as _load_balance_all
from .redundancy import *  # noqa: F401,F403
from .redundancy import __all__ as _redundancy_all
from .choice import *  # noqa: F401,F403
from .choice import __all__ as _choice_all

__all__ = [*_designs_all, *_incast_all, *_load_balance_all, *_redundancy_all, *_choice_all]
