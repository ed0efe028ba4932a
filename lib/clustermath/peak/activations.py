"""Activation memory: what the backward pass needs kept from the forward pass.

Source: source 000, section 11 ("RTL 7", module ``activation_memory``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .ports import sat16
from ..validate import flag, port16
from ..runner import counted, output_ports


@dataclass(frozen=True, slots=True)
class ActivationMemory:
    """Outputs of ``activation_memory``; names are the source's output ports."""

    COMPUTED_FROM: ClassVar[dict[str, tuple[str, ...]]] = {
        "spare_mb": ("act_mb",),
        "fits": ("act_mb",),
        "activations_free_err": ("act_mb",),
    }
    """Outputs computed from other outputs: a saturated one makes them untrustworthy too."""

    act_mb: int
    """Activation memory held, MB (saturates at 65535)."""
    spare_mb: int
    """``hbm_mb - act_mb`` when it fits, else 0, MB."""
    fits: bool
    """``act_mb <= hbm_mb``."""
    activations_free_err: bool
    """The check: a real batch of real layers that holds no activations."""


@counted(
    broken_flag="ignore_activations",
    total="n_sizings",
    flagged="n_unfit",
    counts=lambda r: not r.fits,
    inputs=("layers", "batch", "hbm_mb", "act_per_layer_mb", "recompute"),
    outputs=output_ports(ActivationMemory),
    section="11",
)
def activation_memory(
    *,
    layers: int,
    batch: int,
    act_per_layer_mb: int,
    hbm_mb: int,
    recompute: bool = False,
    ignore_activations: bool = False,
) -> ActivationMemory:
    """Activation memory held for the backward pass, against fast memory.

    Formula (integers, outputs saturating at 65535)::

        held_layers = 1 if recompute else layers
        act_mb      = held_layers * batch * act_per_layer_mb    [MB]
                      (0 when ignore_activations)
        fits        = act_mb <= hbm_mb
        spare_mb    = hbm_mb - act_mb if fits else 0            [MB]

    ``recompute`` is an input port (a choice the run makes), not the broken
    build. As in the source, recomputation holds one layer even when
    ``layers`` is 0. The source forms the product in 32 bits, which wraps for
    very large inputs; here it is exact and then saturates.

    Source: source 000, section 11 (RTL 7).
    """
    layers = port16("layers", layers)
    batch = port16("batch", batch)
    act_per_layer_mb = port16("act_per_layer_mb", act_per_layer_mb)
    hbm_mb = port16("hbm_mb", hbm_mb)
    recompute = flag("recompute", recompute)
    ignore_activations = flag("ignore_activations", ignore_activations)

    held_layers = 1 if recompute else layers
    act = 0 if ignore_activations else sat16(held_layers * batch * act_per_layer_mb)
    fits = act <= hbm_mb
    return ActivationMemory(
        act_mb=act,
        spare_mb=hbm_mb - act if fits else 0,
        fits=fits,
        activations_free_err=layers != 0 and batch != 0 and act_per_layer_mb != 0 and act == 0,
    )
