"""Chapter 1, "Peak is bought, efficiency is earned": source 000's ten integer models and what combines them.

One module per model, in the source's order: ``scaling`` (RTL 1), ``collectives``
(2), ``pipeline`` (3), ``checkpoint`` (4), ``failures`` (5), ``stragglers`` (6),
``activations`` (7), ``fabric`` (8), ``economics`` (9), ``assembled`` (10), over
``ports`` (the 16-bit output contract: saturation and the wrap errata). Three
modules combine them into what the chapter shows: ``worked_tables`` (the ten worked
tables), ``budget`` (the peak-to-delivered budget) and ``debug_lab`` (the debug lab);
import those by module (``from clustermath.peak import debug_lab``).
"""
from .activations import ActivationMemory, activation_memory
from .assembled import PROPERTIES, TrainingClusterModel, failed_properties, training_cluster_model
from .checkpoint import CheckpointCost, checkpoint_cost
from .collectives import CollectiveCost, collective_cost, ring_factor
from .economics import ClusterEconomics, cluster_economics
from .fabric import FabricBisection, fabric_bisection
from .failures import FailureRecovery, failure_recovery
from .pipeline import PipelineBubble, bubble_fraction, pipeline_bubble
from .ports import U16_MAX
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
    "ActivationMemory", "CheckpointCost", "ClusterEconomics", "ClusterScale", "CollectiveCost",
    "FabricBisection", "FailureRecovery", "MODELS", "PROPERTIES", "PipelineBubble", "StragglerStep",
    "TrainingClusterModel", "U16_MAX", "activation_memory", "bubble_fraction", "checkpoint_cost",
    "cluster_economics", "cluster_scale", "collective_cost", "fabric_bisection", "failed_properties",
    "failure_recovery", "pipeline_bubble", "ring_factor", "straggler_step", "training_cluster_model",
]
