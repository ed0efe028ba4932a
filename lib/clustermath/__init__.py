"""clustermath: the models behind *AI Training Clusters*.

The package's folders show the book. Each chapter's models live in one folder,
a *wing*, named as the chapter's view and feedback modules are:

=====================  ==========================================================
``peak/``              chapter 1: source 000's ten integer models, the worked
                       tables, the peak-to-delivered budget, the debug lab
``reliability/``       chapter 2: interruptions, Young and Daly, goodput, stragglers
``placement/``         chapter 3: where TP, PP and DP land, and their traffic
``fabric_designs/``    chapter 4: designs compared, incast, load balance,
                       redundancy, the decision procedure
``scaleup/``           chapter 5: fragmentation, the K-hop ring, the link budget
``validation/``        chapter 6: ``predict_run`` (the models composed into one
                       training step), its calibration, the effective
                       training-time ratio, the days to train, and published
                       measurements as data (``from clustermath.validation
                       import load_measurements``; pandas is loaded on use)
=====================  ==========================================================

Beside the wings sit the modules every wing shares: ``validate`` (every argument
check), ``check`` (the notebooks' check lines), ``labels`` (words for identifiers)
and ``runner`` (source 000's counters over a worked table). Two layers stand on
the models: ``views/`` (widget explorers and figures, one module per wing) and
``feedback/`` (the exercises' misconception catalogues, one module per wing).

Models never import views or feedback; ``tests/test_layers.py`` enforces it.
Every public model is importable from here (``from clustermath import
young_interval``), except ``placement.placement``, whose name is its wing's:
``from clustermath.placement import placement``.
"""
from .check import CheckFailed, check
from .runner import Tally, run, spec_of
from .peak import *  # noqa: F401,F403  chapter 1
from .peak import __all__ as _peak_all
from .reliability import *  # noqa: F401,F403  chapter 2
from .reliability import __all__ as _reliability_all
from .placement import (  # chapter 3 (placement() itself: see above)
    MAX_GPUS, NetworkTraffic, Placement, StepTraffic, TpGroupLayout, hops_crossing_formula,
    network_traffic, step_traffic, tp_group_layout,
)
from .fabric_designs import *  # noqa: F401,F403  chapter 4
from .fabric_designs import __all__ as _fabric_designs_all
from .scaleup import *  # noqa: F401,F403  chapter 5
from .scaleup import __all__ as _scaleup_all
from .validation import *  # noqa: F401,F403  chapter 6
from .validation import __all__ as _validation_all

WINGS = ("peak", "reliability", "placement", "fabric_designs", "scaleup", "validation")
"""The model wings, one per chapter, in the book's order."""

__all__ = [
    "CheckFailed", "Tally", "check", "run", "spec_of", "WINGS",
    *_peak_all, *_reliability_all,
    "MAX_GPUS", "NetworkTraffic", "Placement", "StepTraffic", "TpGroupLayout",
    "hops_crossing_formula", "network_traffic", "step_traffic", "tp_group_layout",
    *_fabric_designs_all, *_scaleup_all, *_validation_all,
]
