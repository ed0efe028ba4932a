"""clustermath: the models behind *AI Training Clusters*.

Small pure functions, one module per topic, each with its formula, units and
source in the docstring. Notebooks import from here; widgets are thin views
over these functions; tests pin every number the book prints.
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
]
