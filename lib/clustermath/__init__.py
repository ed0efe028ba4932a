"""clustermath: the models behind *AI Training Clusters*.

The package has three layers, and its folders show them:

* the top level holds the **models**: small pure functions, one module per
  topic, each with its formula, units and source in the docstring, plus the
  shared plumbing (``validate`` for argument checks, ``check`` for the
  notebooks' check lines, ``ports`` and ``runner`` for source 000's contract);
  ``compositions/`` combines chapter 1's models into its worked tables, its
  peak-to-delivered budget and its debug lab;
* ``views/`` holds the widget explorers and figures (ipywidgets, matplotlib),
  one module per chapter over ``views/base.py``;
* ``feedback/`` holds the exercises' grading feedback: the matching machinery
  in ``feedback/core.py`` and one catalogue of misconceptions per chapter.

Models never import views or feedback; ``tests/test_layers.py`` enforces it.
Every model is importable from here (``from clustermath import young_interval``),
except ``placement.placement``, whose name is its module's: import it as
``from clustermath.placement import placement``.
"""
from .activations import ActivationMemory, activation_memory
from .assembled import PROPERTIES, TrainingClusterModel, failed_properties, training_cluster_model
from .check import CheckFailed, check
from .checkpoint import CheckpointCost, checkpoint_cost
from .collectives import CollectiveCost, collective_cost, ring_factor
from .economics import ClusterEconomics, cluster_economics
from .fabric import FabricBisection, fabric_bisection
from .failures import FailureRecovery, failure_recovery
from .pipeline import PipelineBubble, bubble_fraction, pipeline_bubble
from .ports import U16_MAX
from .runner import Tally, run, spec_of
from .scaling import ClusterScale, cluster_scale
from .stragglers import StragglerStep, straggler_step
from .reliability import *  # noqa: F401,F403  chapter 2: the record, Young, Daly, the interruption table
from .reliability import __all__ as _reliability_all
from .goodput import *  # noqa: F401,F403  chapter 2: stragglers, goodput, the blast radius
from .goodput import __all__ as _goodput_all
from .placement import (  # chapter 3: where TP, PP and DP land  (placement() itself: see above)
    MAX_GPUS, NetworkTraffic, Placement, StepTraffic, TpGroupLayout, hops_crossing_formula,
    network_traffic, step_traffic, tp_group_layout,
)

from .scaleup import *  # noqa: F401,F403  chapter 5: fragmentation, fault rates, the waste bound, links
from .scaleup import __all__ as _scaleup_all
from .ring_builder import *  # noqa: F401,F403  chapter 5: the K-hop ring builder
from .ring_builder import __all__ as _ring_builder_all

MODELS = (
    cluster_scale,
    collective_cost,
    pipeline_bubble,
    checkpoint_cost,
    failure_recovery,
    straggler_step,
    activation_memory,
    fabric_bisection,
    cluster_economics,
    training_cluster_model,
)
"""The ten models of chapter 1, in the source's order (RTL 1 to RTL 10)."""

__all__ = [
    "ActivationMemory", "CheckFailed", "CheckpointCost", "ClusterEconomics", "ClusterScale",
    "CollectiveCost", "FabricBisection", "FailureRecovery", "MODELS", "PROPERTIES",
    "PipelineBubble", "StragglerStep", "Tally", "TrainingClusterModel", "U16_MAX",
    "activation_memory", "bubble_fraction", "check", "checkpoint_cost", "cluster_economics",
    "cluster_scale", "collective_cost", "fabric_bisection", "failed_properties",
    "failure_recovery", "pipeline_bubble", "ring_factor", "run", "spec_of", "straggler_step",
    "training_cluster_model",
    "MAX_GPUS", "NetworkTraffic", "Placement", "StepTraffic", "TpGroupLayout",
    "hops_crossing_formula", "network_traffic", "step_traffic", "tp_group_layout",
    *_reliability_all, *_goodput_all, *_scaleup_all, *_ring_builder_all,
]
from .fabric_designs import *  # noqa: F401,F403  chapter 4: the matrix, scale units, Clos and Table II
from .fabric_designs import __all__ as _fabric_designs_all
from .incast import *  # noqa: F401,F403  chapter 4: buffers and the incast
from .incast import __all__ as _incast_all
from .load_balance import *  # noqa: F401,F403  chapter 4: hashing flows onto uplinks
from .load_balance import __all__ as _load_balance_all
from .redundancy import *  # noqa: F401,F403  chapter 4: slices, spare cubes, headroom, dual-ToR
from .redundancy import __all__ as _redundancy_all
from .fabric_choice import *  # noqa: F401,F403  chapter 4: the decision procedure
from .fabric_choice import __all__ as _fabric_choice_all

__all__ += [*_fabric_designs_all, *_incast_all, *_load_balance_all, *_redundancy_all, *_fabric_choice_all]
