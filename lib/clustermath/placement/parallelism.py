"""Where a job's tensor, pipeline and data parallelism land: NVLink domain or network.

A training job of ``tp × pp × dp`` GPUs numbers its ranks with one
parallelism innermost, one in the middle and one outermost; the scheduler
then fills NVLink domains (8-GPU servers, 72-GPU racks, any size) in rank
order. This module counts where each kind of traffic then travels:

* a **tensor-parallel group** (the ``tp`` ranks sharing one stage of one
  replica) is *inside* when all its ranks sit in one domain;
* a **pipeline hop** joins the tensor-parallel group of stage ``s`` to the one
  of stage ``s + 1`` in the same replica (``(pp - 1) × dp`` hops; each is
  ``tp`` point-to-point links, tensor rank ``i`` to tensor rank ``i``); it
  *crosses* when at least one of its links leaves the domain;
* a **data-parallel group** (the ``dp`` ranks holding the same tensor rank of
  the same stage, one per replica: ``tp × pp`` groups) *crosses the network*
  when its ranks are not all in one domain.

``step_traffic`` is a per-step byte model of the three kinds of traffic
(Narayanan et al. 2021, section 3), and ``network_traffic`` combines it with
a placement: how many of those bytes leave the NVLink domains.

Sources: Narayanan et al. (2021) for the placement rule and the
communication volumes; source 003 ("Training clusters") for Llama 3 405B's
TP 8 × PP 16 × DP 128 on 16,384 GPUs and its re-housing on NVL72 racks;
Grattafiori et al. (2024) for Llama 3's shape.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..validate import flag, one_of, whole

__all__ = [
    "MAX_GPUS",
    "NetworkTraffic",
    "Placement",
    "StepTraffic",
    "TpGroupLayout",
    "hops_crossing_formula",
    "network_traffic",
    "placement",
    "step_traffic",
    "tp_group_layout",
]

MAX_GPUS = 1 << 20
"""Largest job the model accepts: 1,048,576 GPUs (the counts enumerate every rank)."""

AXES = ("tp", "pp", "dp")
Packing = Literal["groups", "ranks"]


def _order(order: str | tuple[str, ...]) -> tuple[str, str, str]:
    parts = tuple(p.strip() for p in order.split(",")) if isinstance(order, str) else tuple(order)
    if sorted(parts) != sorted(AXES):
        raise ValueError(f"order must list tp, pp and dp once each, innermost first "
                         f"(for example 'tp,pp,dp'), got {order!r}")
    return parts  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Placement:
    """Outputs of ``placement``: where a ``tp × pp × dp`` job's traffic lands."""

    tp: int
    """Tensor-parallel degree (ranks per tensor-parallel group)."""
    pp: int
    """Pipeline-parallel degree (stages per replica)."""
    dp: int
    """Data-parallel degree (replicas)."""
    domain_size: int
    """GPUs per NVLink domain."""
    order: str
    """Rank order, innermost first (``tp,pp,dp`` is Megatron's and Llama 3's)."""
    packing: str
    """``groups``: whole tensor-parallel groups per domain; ``ranks``: consecutive ranks fill each domain."""
    gpus: int
    """``tp × pp × dp``."""
    groups_per_domain: int
    """Whole tensor-parallel groups one domain holds, ``domain_size // tp``."""
    domains: int
    """Domains the job occupies (the last may be partly filled)."""
    last_domain_gpus: int
    """GPUs the job uses in its last domain."""
    partial_last_domain: bool
    """The last domain holds fewer GPUs than a full one."""
    idle_gpus: int
    """GPUs of the occupied domains that the job leaves idle, ``domains × domain_size - gpus``."""
    tp_groups: int
    """Tensor-parallel groups, ``pp × dp``."""
    tp_groups_inside: int
    """Tensor-parallel groups whose ranks all sit in one domain."""
    pp_hops: int
    """Pipeline hops, ``(pp - 1) × dp``: stage s to stage s + 1 of the same replica."""
    pp_hops_crossing: int
    """Pipeline hops with at least one link leaving its domain."""
    pp_links: int
    """Point-to-point links of all hops, ``tp × pp_hops``."""
    pp_links_crossing: int
    """Links between two domains."""
    dp_groups: int
    """Data-parallel groups, ``tp × pp`` (one per tensor rank and stage)."""
    dp_groups_crossing: int
    """Data-parallel groups whose ranks span more than one domain."""
    warnings: tuple[str, ...]
    """Facts a scheduler would want to know: idle GPUs, a partial last domain, split groups."""

    @property
    def pp_hops_on_nvlink(self) -> int:
        """Pipeline hops that stay inside one domain."""
        return self.pp_hops - self.pp_hops_crossing

    @property
    def tp_groups_split(self) -> int:
        """Tensor-parallel groups spread over two or more domains."""
        return self.tp_groups - self.tp_groups_inside


def _domains_of_ranks(tp: int, pp: int, dp: int, domain_size: int, order: tuple[str, str, str],
                      packing: str) -> np.ndarray:
    """Domain of every rank, as an array indexed ``[replica, stage, tensor rank]``."""
    sizes = {"tp": tp, "pp": pp, "dp": dp}
    d_idx, s_idx, t_idx = np.indices((dp, pp, tp), dtype=np.int64)
    coord = {"tp": t_idx, "pp": s_idx, "dp": d_idx}
    rank = np.zeros((dp, pp, tp), dtype=np.int64)
    stride = 1
    for axis in order:  # innermost first
        rank += coord[axis] * stride
        stride *= sizes[axis]
    if packing == "ranks":
        return rank // domain_size
    return (rank // tp) // (domain_size // tp)  # whole groups; tp is innermost here


def placement(tp: int, pp: int, dp: int, domain_size: int, *, order: str = "tp,pp,dp",
              packing: Packing = "groups", strict: bool = False) -> Placement:
    """Place a ``tp × pp × dp`` job on NVLink domains of ``domain_size`` GPUs, in rank order.

    Ranks are numbered with the first axis of ``order`` innermost::

        order "tp,pp,dp":  rank = t + tp × (s + pp × d)     (t tensor rank, s stage, d replica)

    and fill domains in rank order, one of two ways:

    * ``packing="groups"`` (default; needs ``tp`` innermost): whole
      tensor-parallel groups, ``k = domain_size // tp`` to a domain, so no
      group is ever split. Group ``g = rank // tp`` lands in domain ``g // k``;
      a domain leaves ``domain_size - k × tp`` GPUs idle when ``tp`` does not
      divide ``domain_size``.
    * ``packing="ranks"``: rank ``r`` lands in domain ``r // domain_size``;
      a tensor-parallel group may then straddle two domains.

    Counts (see the module docstring for the three definitions)::

        domains       = ceil(pp × dp / k)            (groups)   ceil(gpus / domain_size)   (ranks)
        idle_gpus     = domains × domain_size - gpus
        pp_hops       = (pp - 1) × dp,   dp_groups = tp × pp,   tp_groups = pp × dp

    With ``tp,pp,dp`` order and group packing, hop ``g -> g + 1`` crosses exactly
    when ``g + 1`` is a multiple of ``k`` but not of ``pp`` (a replica's first
    stage has no hop into it); see ``hops_crossing_formula``.

    A job that leaves GPUs idle in the domains it occupies (a partly filled
    last domain, ``tp`` not dividing ``domain_size``) or, with rank packing,
    splits a tensor-parallel group is reported in ``warnings`` by default; with
    ``strict=True`` it raises ``ValueError`` with the same explanation.

    Raises ``ValueError`` naming the argument and its allowed range for a
    degree or domain size outside ``1..1,048,576``, a job of more than
    1,048,576 GPUs, ``tp > domain_size`` (a tensor-parallel group must fit in
    one domain), an ``order`` that is not a permutation of tp, pp, dp, or group
    packing with ``tp`` not innermost.

    Source: rule from Narayanan et al. (2021); the Llama 3 405B layouts
    (2,048 of 2,048 groups inside a server, 1,920 of 1,920 hops on the network;
    228 NVL72 racks and 213 crossing hops; 128 of 128 data-parallel groups on
    the network) from source 003.
    """
    tp = whole("tp", tp, low=1, high=MAX_GPUS)
    pp = whole("pp", pp, low=1, high=MAX_GPUS)
    dp = whole("dp", dp, low=1, high=MAX_GPUS)
    domain_size = whole("domain_size", domain_size, low=1, high=MAX_GPUS)
    axes = _order(order)
    one_of("packing", packing, ("groups", "ranks"))
    if not isinstance(strict, bool):
        raise ValueError(f"strict must be True or False, got {strict!r}")
    gpus = tp * pp * dp
    if gpus > MAX_GPUS:
        raise ValueError(f"tp × pp × dp must be at most {MAX_GPUS:,} GPUs, got {tp} × {pp} × {dp} = {gpus:,}")
    if tp > domain_size:
        raise ValueError(f"tp must be in 1..domain_size ({domain_size}), got tp={tp}: a tensor-parallel "
                         f"group has to fit inside one NVLink domain of {domain_size} GPUs")
    if packing == "groups" and axes[0] != "tp":
        raise ValueError(f"packing='groups' places whole tensor-parallel groups, so order must put tp "
                         f"innermost, got order={order!r}; use packing='ranks' for other orders")

    dom = _domains_of_ranks(tp, pp, dp, domain_size, axes, packing)
    k = domain_size // tp
    domains = int(dom.max()) + 1
    occupancy = np.bincount(dom.ravel(), minlength=domains)
    capacity = k * tp if packing == "groups" else domain_size
    last = int(occupancy[-1])
    idle = domains * domain_size - gpus

    tp_inside = int((dom.min(axis=2) == dom.max(axis=2)).sum())
    link_cross = dom[:, 1:, :] != dom[:, :-1, :]
    links_crossing = int(link_cross.sum())
    hops_crossing = int(link_cross.any(axis=2).sum())
    dp_crossing = int((dom.min(axis=0) != dom.max(axis=0)).sum())

    notes: list[str] = []
    stranded = domain_size - capacity
    if stranded:
        notes.append(f"tp={tp} does not divide domain_size={domain_size}: each domain takes {k} whole "
                     f"tensor-parallel group{'s' if k != 1 else ''} ({capacity} GPUs) and leaves {stranded} idle")
    if last < capacity:
        notes.append(f"the job does not fill its last domain: {last} of {capacity} usable GPUs "
                     f"({last // tp} of {k} groups)" if packing == "groups" else
                     f"the job does not fill its last domain: {last} of {capacity} GPUs")
    if tp_inside < pp * dp:
        notes.append(f"{pp * dp - tp_inside:,} of {pp * dp:,} tensor-parallel groups straddle a domain boundary")
    if idle:
        notes.append(f"{idle:,} GPUs of the {domains:,} occupied domains stay idle")
    if strict and notes:
        raise ValueError("strict=True: " + "; ".join(notes))

    return Placement(
        tp=tp, pp=pp, dp=dp, domain_size=domain_size, order=",".join(axes), packing=packing,
        gpus=gpus, groups_per_domain=k, domains=domains, last_domain_gpus=last,
        partial_last_domain=last < capacity, idle_gpus=idle,
        tp_groups=pp * dp, tp_groups_inside=tp_inside,
        pp_hops=(pp - 1) * dp, pp_hops_crossing=hops_crossing,
        pp_links=tp * (pp - 1) * dp, pp_links_crossing=links_crossing,
        dp_groups=tp * pp, dp_groups_crossing=dp_crossing,
        warnings=tuple(notes),
    )


def hops_crossing_formula(pp: int, dp: int, groups_per_domain: int) -> tuple[int, int, int]:
    """Crossing pipeline hops in closed form, for ``tp,pp,dp`` order with whole groups per domain.

    Number the ``G = pp × dp`` tensor-parallel groups in rank order. The hop
    into group ``j`` (``1 <= j < G``) exists unless ``j`` starts a replica
    (``j`` a multiple of ``pp``) and crosses when ``j`` starts a domain (a
    multiple of ``k``). So::

        crossing = floor((G - 1) / k) - floor((G - 1) / lcm(k, pp))

    Returns ``(crossing, domain starts, domain starts that are also replica starts)``.
    """
    pp = whole("pp", pp, low=1, high=MAX_GPUS)
    dp = whole("dp", dp, low=1, high=MAX_GPUS)
    k = whole("groups_per_domain", groups_per_domain, low=1, high=MAX_GPUS)
    last = pp * dp - 1
    starts, both = last // k, last // math.lcm(k, pp)
    return starts - both, starts, both


@dataclass(frozen=True, slots=True)
class TpGroupLayout:
    """Where each tensor-parallel group sits, for drawing (``tp,pp,dp`` order, group packing)."""

    placement: Placement
    domain: np.ndarray
    """Domain of group ``g`` (groups in rank order)."""
    slot: np.ndarray
    """Position of group ``g`` inside its domain, 0 at the top."""
    stage: np.ndarray
    """Pipeline stage of group ``g``."""
    replica: np.ndarray
    """Replica (data-parallel index) of group ``g``."""
    hop_from: np.ndarray
    """Group at the start of each pipeline hop."""
    hop_crosses: np.ndarray
    """Whether each hop crosses a domain boundary (the hop ends at ``hop_from + 1``)."""


def tp_group_layout(tp: int, pp: int, dp: int, domain_size: int) -> TpGroupLayout:
    """Group-level layout of a ``tp,pp,dp`` job with whole groups per domain (see ``placement``).

    ``g = s + pp × d`` for stage ``s`` of replica ``d``; domain ``g // k`` and
    slot ``g % k`` with ``k = domain_size // tp``; the hops are ``g -> g + 1``
    for every ``g`` that is not a replica's last stage.
    """
    where = placement(tp, pp, dp, domain_size)
    k = where.groups_per_domain
    g = np.arange(pp * dp)
    hop_from = g[(g % pp) != pp - 1]
    return TpGroupLayout(
        placement=where, domain=g // k, slot=g % k, stage=g % pp, replica=g // pp,
        hop_from=hop_from, hop_crosses=(hop_from // k) != ((hop_from + 1) // k),
    )


# -- the traffic of one step ---------------------------------------------------------

@dataclass(frozen=True, slots=True)
class StepTraffic:
    """Outputs of ``step_traffic``: bytes each kind of parallelism moves in one training step."""

    microbatches: int
    """Microbatches per replica per step."""
    tp_collectives_per_gpu: float
    """Tensor-parallel all-reduces a GPU joins per step (average over stages): 4 × layers / pp × microbatches."""
    tp_bytes_per_gpu: float
    """Bytes a GPU sends for tensor parallelism per step."""
    pp_sends_per_gpu: float
    """Pipeline sends per GPU per step (average over stages): 2 × microbatches × (pp - 1) / pp."""
    pp_bytes_per_gpu: float
    """Bytes a GPU sends to neighbouring stages per step (average over stages)."""
    pp_bytes_per_link: float
    """Bytes one pipeline link (tensor rank i of stage s to stage s + 1) carries per step, both directions."""
    dp_collectives_per_gpu: int
    """Data-parallel exchanges per step: one reduce-scatter of the gradients and one all-gather of the
    parameters (one logical exchange, an all-reduce when the widths agree; in practice bucketed)."""
    dp_bytes_per_gpu: float
    """Bytes a GPU sends for data parallelism per step: the gradient reduce-scatter plus the all-gather."""
    dp_reduce_bytes_per_gpu: float
    """The reduce-scatter half of ``dp_bytes_per_gpu``, at ``grad_bytes`` per value."""
    gpus: int
    """``tp × pp × dp``."""

    @property
    def tp_bytes(self) -> float:
        """Tensor-parallel bytes of the whole job per step."""
        return self.tp_bytes_per_gpu * self.gpus

    @property
    def pp_bytes(self) -> float:
        """Pipeline bytes of the whole job per step."""
        return self.pp_bytes_per_gpu * self.gpus

    @property
    def dp_bytes(self) -> float:
        """Data-parallel bytes of the whole job per step."""
        return self.dp_bytes_per_gpu * self.gpus


def step_traffic(*, tp: int, pp: int, dp: int, layers: int, hidden: int, tokens_per_step: int,
                 microbatch_tokens: int, params: float, grad_bytes: int, gather_bytes: int | None = None,
                 act_bytes: int = 2, scatter_gather: bool = True) -> StepTraffic:
    """Bytes per GPU per training step for tensor, pipeline and data parallelism.

    A transformer of ``layers`` layers and width ``hidden`` (``params``
    parameters) trains on ``tokens_per_step`` tokens a step, split evenly over
    ``dp`` replicas and, inside a replica, into microbatches of
    ``microbatch_tokens`` tokens (``b × s``). One microbatch's activation at a
    layer boundary is ``A = microbatch_tokens × hidden × act_bytes`` bytes.
    A ring all-reduce over ``n`` ranks sends ``2 (n - 1) / n`` of its buffer
    per rank (chapter 1). Following Narayanan et al. (2021), section 3.3::

        m       = tokens_per_step / dp / microbatch_tokens                      microbatches
        TP      = 4 all-reduces of A per layer per microbatch (2 forward, 2 backward)
                  bytes/GPU = 4 × (layers / pp) × m × 2 (tp - 1) / tp × A
        PP      = per microbatch and stage boundary, A forward and A backward;
                  with the scatter/gather optimisation each of the tp links carries A / tp
                  bytes/link = 2 × m × A / tp   (2 × m × A without scatter/gather)
                  bytes/GPU  = (pp - 1) / pp × bytes/link   (the last stage sends nothing forward,
                               the first nothing backward: averaged over stages)
        DP      = a reduce-scatter of the GPU's gradient shard at grad_bytes per value, then an
                  all-gather of the same number of values at gather_bytes (the updated
                  parameters, or the reduced gradient in a plain all-reduce)
                  bytes/GPU = (dp - 1) / dp × params / (tp × pp) × (grad_bytes + gather_bytes)
                  (= 2 (dp - 1) / dp × params / (tp × pp) × grad_bytes when the widths agree)

    ``grad_bytes`` has no default on purpose: the width the gradients are
    reduced in is a choice of the training stack and changes the data-parallel
    bytes in proportion. Llama 3 reduce-scatters its gradients in FP32
    (``grad_bytes=4``; Grattafiori et al. (2024), section 3.3.2). The paper
    does not give the width of the parameter all-gather; chapter 3 assumes
    BF16 (``gather_bytes=2``), the width the model computes in, and says so.
    ``gather_bytes=None`` means the same width as ``grad_bytes`` (an all-reduce).

    Assumptions: no activation recomputation (it would repeat the forward
    all-reduces), no sequence or context parallelism, layers spread evenly
    over stages (``layers / pp`` may be fractional: an average), the
    embedding and output layers ignored, gradients reduced once per step.
    Units: bytes.

    Raises ``ValueError`` naming the argument and its range for
    non-positive sizes, or when tokens do not split into whole microbatches.
    """
    tp = whole("tp", tp, low=1, high=MAX_GPUS)
    pp = whole("pp", pp, low=1, high=MAX_GPUS)
    dp = whole("dp", dp, low=1, high=MAX_GPUS)
    layers = whole("layers", layers, low=1, high=1 << 20)
    hidden = whole("hidden", hidden, low=1, high=1 << 24)
    tokens_per_step = whole("tokens_per_step", tokens_per_step, low=1, high=1 << 40)
    microbatch_tokens = whole("microbatch_tokens", microbatch_tokens, low=1, high=1 << 40)
    act_bytes = whole("act_bytes", act_bytes, low=1, high=8)
    grad_bytes = whole("grad_bytes", grad_bytes, low=1, high=8)
    scatter_gather = flag("scatter_gather", scatter_gather)
    gather_bytes = grad_bytes if gather_bytes is None else whole("gather_bytes", gather_bytes, low=1, high=8)
    if not (isinstance(params, (int, float)) and not isinstance(params, bool) and params > 0):
        raise ValueError(f"params must be a positive number of parameters, got {params!r}")
    per_replica, rem = divmod(tokens_per_step, dp)
    microbatches, rem2 = divmod(per_replica, microbatch_tokens)
    if rem or rem2 or microbatches < 1:
        raise ValueError(f"tokens_per_step must split into dp × a whole number of microbatches of "
                         f"{microbatch_tokens:,} tokens, got {tokens_per_step:,} tokens over dp={dp}")
    activation = microbatch_tokens * hidden * act_bytes
    tp_collectives = 4 * layers / pp * microbatches
    per_link = 2 * microbatches * activation / (tp if scatter_gather else 1)
    return StepTraffic(
        microbatches=microbatches,
        tp_collectives_per_gpu=tp_collectives,
        tp_bytes_per_gpu=tp_collectives * 2 * (tp - 1) / tp * activation,
        pp_sends_per_gpu=2 * microbatches * (pp - 1) / pp,
        pp_bytes_per_gpu=(pp - 1) / pp * per_link,
        pp_bytes_per_link=per_link,
        dp_collectives_per_gpu=1,
        dp_bytes_per_gpu=(dp - 1) / dp * params / (tp * pp) * (grad_bytes + gather_bytes),
        dp_reduce_bytes_per_gpu=(dp - 1) / dp * params / (tp * pp) * grad_bytes,
        gpus=tp * pp * dp,
    )


@dataclass(frozen=True, slots=True)
class NetworkTraffic:
    """Outputs of ``network_traffic``: a step's bytes, split between NVLink and the network."""

    tp_network_bytes: float
    """Tensor-parallel bytes of groups that straddle domains."""
    pp_network_bytes: float
    """Pipeline bytes on links between domains."""
    dp_network_bytes: float
    """Gradient bytes of data-parallel groups that span domains."""
    nvlink_bytes: float
    """Everything else: traffic that stays inside a domain."""

    @property
    def network_bytes(self) -> float:
        """All bytes of the step that travel over the network."""
        return self.tp_network_bytes + self.pp_network_bytes + self.dp_network_bytes


def network_traffic(where: Placement, traffic: StepTraffic) -> NetworkTraffic:
    """How much of one step's traffic (``step_traffic``) leaves the NVLink domains (``placement``).

    Formula (bytes per step, whole job)::

        tp_network = TP bytes × tp_groups_split / tp_groups
        pp_network = pp_links_crossing × pp_bytes_per_link
        dp_network = DP bytes × dp_groups_crossing / dp_groups

    A split collective is counted whole: a ring with even one link between
    domains runs at the network's pace. Hierarchical collectives that reduce
    inside a domain first would put fewer bytes on the network than this.
    Raises ``ValueError`` when the two describe different jobs.
    """
    if traffic.gpus != where.gpus:
        raise ValueError(f"traffic and placement must describe the same job, got {traffic.gpus:,} and "
                         f"{where.gpus:,} GPUs")
    tp_net = traffic.tp_bytes * where.tp_groups_split / where.tp_groups
    pp_net = where.pp_links_crossing * traffic.pp_bytes_per_link
    dp_net = traffic.dp_bytes * where.dp_groups_crossing / where.dp_groups
    total = traffic.tp_bytes + traffic.pp_bytes + traffic.dp_bytes
    return NetworkTraffic(tp_network_bytes=tp_net, pp_network_bytes=pp_net, dp_network_bytes=dp_net,
                          nvlink_bytes=total - tp_net - pp_net - dp_net)
