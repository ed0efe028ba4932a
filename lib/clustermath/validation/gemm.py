"""Chapter 6: the time of one GEMM from its shape, calibrated on published GEMM tables (issue 43, item 1).

A GEMM ``C (M×N) = A (M×K) · B (K×N)`` (``batch`` of them in one launch) is cut into output
tiles of ``TILE_M × TILE_N`` (128 × 256, CUTLASS's default for Hopper's 16-bit and FP8 kernels);
each streaming multiprocessor (SM) computes one tile at a time, so the tiles run in *waves* of
``sms``. With fewer tiles than SMs a library splits ``K`` over ``s`` SMs per tile (split-K); it is
taken to pick the fastest ``s``. The time::

    t = t₀ + max(compute, memory)                                     (a roofline plus a fixed cost)
    compute = min over s in 1..max(1, ⌊SMs/tiles⌋) of
              ⌈tiles·s / SMs⌉ · 2·TILE_M·TILE_N·(K/s + K½) / (η · peak / SMs)
    memory  = batch · ((M·K + K·N)·bytes_in + M·N·2) / BW_mem
    tiles   = ⌈M/TILE_M⌉ · ⌈N/TILE_N⌉ · batch

* ``⌈·⌉`` over the tiles is tile quantisation, over the waves wave quantisation;
* ``K½`` is the size term: a tile's prologue and epilogue (filling the pipeline, writing ``C``) cost
  as much as ``K½`` more steps of ``K``, so a tile runs at ``K/(K + K½)`` of ``η``;
* ``t₀`` is the launch and synchronisation cost of any kernel on that GPU.

Each time is non-decreasing in ``M``, ``N``, ``K`` and ``batch`` (every term is, and the split-K
choices only shrink as the tiles grow). FP8 is held to what its tensor cores allow:
``t_fp8 = min(t_16, max(t_fp8 model, t_16 · peak_16/peak_8))``, never slower than 16-bit and at
most the peak ratio faster.

Calibration (``KERNEL_POINTS``, three constants per GPU and precision, one table point each, by a
rule fixed before any error was looked at): ``η`` on the table's point with the most FLOPs;
``K½`` on the point with the largest output (``M·N·batch``) and the smallest ``K``; ``t₀`` on the
point with the fewest FLOPs of the GPU's 16-bit table (shared by its FP8 kernels: a launch costs
the same whatever the operands). The tables:

* **OpenXLA's default matmul performance table** (``xla/service/gpu/model/matmul_interpolator_data.h``,
  openxla/xla commit 71feeddf7c, 2025-10-21, "Update latency hiding scheduler cost models for
  B200/H100 FP8 matmul"): measured FLOP/s for ``batch ∈ {1, 2, 4}`` and ``M, N, K`` from 256 to
  4,096, keys ``sm_90`` (H100) and ``sm_100`` (B200), operands ``bf16`` and ``f8e4m3fn`` (output
  BF16). Used for H100 16-bit and B200 16-bit and FP8. Its ``sm_90`` FP8 entries are **not** used:
  they reach 2,593 TFLOP/s at 4,096³ (batch 4), above the H100's dense FP8 peak of 1,979, which no
  kernel can do.
* **TileLang's FP8 benchmark** (tile-ai/tilelang ``benchmark/matmul_fp8/README.md``, H800 SXM, whose
  tensor cores are the H100 SXM's): ``M = N = 8,192``, ``K`` from 256 to 16,384. Used for H100 FP8.
  Its columns are mislabelled: the "latency (s)" is in milliseconds and the "TFLOPs" in PFLOP/s
  (1.523 at ``K = 16,384`` is 1,523 TFLOP/s, as 2·8192²·16384 / 1.443808 ms gives).

H200 runs the H100's kernels (same die, same clocks; its own memory bandwidth); GB200 the B200's
(same die, timed at the B200's peaks, ``gpus.Gpu.timed_bf16_tflops``, as ``predict_run`` times it).
A100 has no table here: ``gemm_time`` refuses it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..validate import one_of, real, whole
from .gpus import Gpu, gpu as _gpu

__all__ = ["GEMM_CONSTANTS", "GEMM_PRECISIONS", "GemmConstants", "KERNEL_FAMILY", "KERNEL_POINTS", "KernelPoint",
           "TILE_M", "TILE_N", "fit_gemm_constants", "gemm_time"]

TILE_M, TILE_N = 128, 256
"""Output tile of one SM's GEMM kernel, elements (CUTLASS's default on Hopper for 16-bit and FP8)."""
GEMM_PRECISIONS = ("bf16", "fp16", "fp8")
"""Operand precisions ``gemm_time`` knows (``bf16`` and ``fp16`` run the same 16-bit kernels)."""
KERNEL_FAMILY = {"H100-SXM5-80GB": "H100-SXM5-80GB", "H200-SXM-141GB": "H100-SXM5-80GB",
                 "B200-SXM-180GB": "B200-SXM-180GB", "GB200-NVL72": "B200-SXM-180GB"}
"""Whose calibrated kernels a GPU runs (a part without a table of its own borrows its die's)."""

_XLA = ("OpenXLA matmul_interpolator_data.h @71feeddf7c (2025-10-21), table {key}, "
        "b={b} m={m} n={n} k={k}, {dtype}: {flops:,} FLOP/s")
_TILELANG = ("tile-ai/tilelang benchmark/matmul_fp8/README.md (H800 SXM), row K={k}: "
             "{ms} ms, printed as {printed} 'TFLOPs' (= PFLOP/s)")


@dataclass(frozen=True, slots=True)
class KernelPoint:
    """One published GEMM benchmark point: a shape, its measured rate, where it is printed, and the
    constant it calibrates (``efficiency``, ``k_half`` or ``latency_s``)."""

    gpu: str
    precision: str
    batch: int
    m: int
    n: int
    k: int
    tflops: float
    source: str
    constant: str

    def __post_init__(self) -> None:
        one_of("gpu", self.gpu, tuple(KERNEL_FAMILY))
        one_of("precision", self.precision, GEMM_PRECISIONS)
        for name in ("batch", "m", "n", "k"):
            whole(name, getattr(self, name), low=1)
        real("tflops", self.tflops, low_open=True, unit="TFLOP/s")
        one_of("constant", self.constant, ("efficiency", "k_half", "latency_s"))

    @property
    def seconds(self) -> float:
        """The measured time of the point, ``2·batch·M·N·K / rate``, s."""
        return 2.0 * self.batch * self.m * self.n * self.k / (self.tflops * 1e12)


def _xla(gpu: str, key: str, precision: str, b: int, m: int, n: int, k: int, flops: int, constant: str) -> KernelPoint:
    dtype = "bf16xbf16->bf16" if precision == "bf16" else "f8e4m3fnxf8e4m3fn->bf16"
    return KernelPoint(gpu, precision, b, m, n, k, flops / 1e12,
                       _XLA.format(key=key, b=b, m=m, n=n, k=k, dtype=dtype, flops=flops), constant)


KERNEL_POINTS: tuple[KernelPoint, ...] = (
    _xla("H100-SXM5-80GB", "sm_90", "bf16", 4, 4096, 4096, 4096, 788_699_393_418_751, "efficiency"),
    _xla("H100-SXM5-80GB", "sm_90", "bf16", 4, 4096, 4096, 256, 505_171_406_257_351, "k_half"),
    _xla("H100-SXM5-80GB", "sm_90", "bf16", 1, 256, 256, 256, 6_721_641_025_641, "latency_s"),
    KernelPoint("H100-SXM5-80GB", "fp8", 1, 8192, 8192, 16_384, 2.0 * 8192 * 8192 * 16_384 / 1.443808e-3 / 1e12,
                _TILELANG.format(k=16_384, ms=1.443808, printed=1.523), "efficiency"),
    KernelPoint("H100-SXM5-80GB", "fp8", 1, 8192, 8192, 256, 2.0 * 8192 * 8192 * 256 / 0.091488e-3 / 1e12,
                _TILELANG.format(k=256, ms=0.091488, printed=0.376), "k_half"),
    _xla("B200-SXM-180GB", "sm_100", "bf16", 4, 4096, 4096, 4096, 1_670_467_342_710_337, "efficiency"),
    _xla("B200-SXM-180GB", "sm_100", "bf16", 4, 4096, 4096, 256, 791_826_754_730_025, "k_half"),
    _xla("B200-SXM-180GB", "sm_100", "bf16", 1, 256, 256, 256, 6_765_006_451_612, "latency_s"),
    _xla("B200-SXM-180GB", "sm_100", "fp8", 4, 4096, 4096, 4096, 3_279_676_742_061_148, "efficiency"),
    _xla("B200-SXM-180GB", "sm_100", "fp8", 4, 4096, 4096, 256, 1_012_754_984_761_399, "k_half"),
)
"""The table points the constants are fitted on, one per constant (see the module's rule)."""


@dataclass(frozen=True, slots=True)
class GemmConstants:
    """The calibrated constants of one GPU's kernels at one precision (``fit_gemm_constants``)."""

    efficiency: float
    """η: share of the dense peak a tile's steady state sustains, in (0, 1]."""
    k_half: float
    """K½: the fixed work of a tile (prologue, epilogue) as steps of K, elements."""
    latency_s: float
    """t₀: the fixed cost of a launch, s."""

    def __post_init__(self) -> None:
        real("efficiency", self.efficiency, low_open=True, high=1.0)
        real("k_half", self.k_half, unit="elements")
        real("latency_s", self.latency_s, unit="s")


GEMM_CONSTANTS: dict[tuple[str, str], GemmConstants] = {
    ("H100-SXM5-80GB", "bf16"): GemmConstants(efficiency=0.8544, k_half=137.6, latency_s=3.54e-6),
    ("H100-SXM5-80GB", "fp8"): GemmConstants(efficiency=0.8341, k_half=792.8, latency_s=3.54e-6),
    ("B200-SXM-180GB", "bf16"): GemmConstants(efficiency=0.8111, k_half=280.9, latency_s=3.45e-6),
    ("B200-SXM-180GB", "fp8"): GemmConstants(efficiency=0.8667, k_half=619.4, latency_s=3.45e-6),
}
"""``fit_gemm_constants()`` rounded (``tests/test_gemm.py`` refits them). One point is not met by
``gemm_time``: TileLang's H100 FP8 run at ``K = 256`` (91.5 µs) is slower than the 16-bit model's
68.0 µs for that shape, so the bound "FP8 never slower than 16-bit" wins there; its ``K½`` is still
the value at which the FP8 model alone meets it.

Error on the tables' other points (held out; computed when these were fitted): OpenXLA H100 16-bit,
median |error| 12.0 % (worst 46 %) over 372 shapes, 1.9 % (worst 10.6 %) over the 53 with
``M·batch ≥ 4,096`` and ``N, K ≥ 1,024`` (the shapes of training); B200 16-bit 13.5 % / 4.6 %
(worst 13.7 %); B200 FP8 15.5 % / 7.7 % (worst 25 %); TileLang H100 FP8, the five other rows
within 5.1 %. A sustained benchmark, held out: stas00/ml-engineering's "Maximum Achievable Matmul
FLOPS" table (mamf-finder.py, warmed up to the power-limited clock) prints 792.1 TFLOP/s for an H100
SXM at 6144×17920×2816 (BF16); ``gemm_time`` gives 785 there (−0.9 %), so the tables are not
boost-clock figures that a training run cannot sustain (``tests/test_gemm.py``)."""


def _as_gpu(value: object) -> Gpu:
    record = value if isinstance(value, Gpu) else _gpu(value)  # type: ignore[arg-type]
    if record.name not in KERNEL_FAMILY:
        raise ValueError(f"gpu must be one of {list(KERNEL_FAMILY)!r} (a part with a calibrated GEMM table), "
                         f"got {record.name!r}")
    return record


def _model_time(m: int, n: int, k: int, batch: int, g: Gpu, precision: str, c: GemmConstants) -> float:
    """The roofline of the module's formula for one precision, without the FP8 bounds, s."""
    peak = g.peak_tflops(precision) * g.timed_share * 1e12
    tiles = math.ceil(m / TILE_M) * math.ceil(n / TILE_N) * batch
    per_step = 2.0 * TILE_M * TILE_N * g.sms / (c.efficiency * peak)
    compute = min(math.ceil(tiles * s / g.sms) * (k / s + c.k_half) for s in range(1, max(1, g.sms // tiles) + 1))
    bytes_in = 1.0 if precision == "fp8" else 2.0
    memory = batch * ((m * k + k * n) * bytes_in + 2.0 * m * n) / (g.memory_TBps * 1e12)
    return c.latency_s + max(compute * per_step, memory)


def gemm_time(m: int, n: int, k: int, *, gpu: str | Gpu, precision: str = "bf16", batch: int = 1,
              constants: dict[tuple[str, str], GemmConstants] | None = None) -> float:
    """Time of ``batch`` GEMMs of ``M×K`` by ``K×N`` on ``gpu`` (a name or a ``Gpu``) at ``precision``, s.

    The module's formula with the kernel constants of the GPU's family (``KERNEL_FAMILY``);
    ``constants`` replaces ``GEMM_CONSTANTS``. FP8: never slower than 16-bit, at most the peak
    ratio faster. ``ValueError`` names a size below 1, an unknown precision or a GPU without a table.
    """
    m_, n_, k_ = (whole(name, x, low=1, integral_only=False) for name, x in (("m", m), ("n", n), ("k", k)))
    b = whole("batch", batch, low=1, integral_only=False)
    one_of("precision", precision, GEMM_PRECISIONS)
    g = _as_gpu(gpu)
    table = GEMM_CONSTANTS if constants is None else constants
    family = KERNEL_FAMILY[g.name]
    t16 = _model_time(m_, n_, k_, b, g, "bf16", table[(family, "bf16")])
    if precision != "fp8":
        return t16
    t8 = _model_time(m_, n_, k_, b, g, "fp8", table[(family, "fp8")])
    return min(t16, max(t8, t16 * g.bf16_tflops / g.fp8_tflops))


def _solve(constant: str, point: KernelPoint, c: GemmConstants) -> GemmConstants:
    """The value of ``constant`` at which the raw model meets ``point`` (bisection; the others fixed)."""
    g = _gpu(point.gpu)

    def at(x: float) -> float:
        trial = GemmConstants(**{"efficiency": c.efficiency, "k_half": c.k_half, "latency_s": c.latency_s,
                                 constant: x})
        return _model_time(point.m, point.n, point.k, point.batch, g, point.precision, trial) - point.seconds

    lo, hi = {"efficiency": (1e-3, 1.0), "k_half": (0.0, 1e5), "latency_s": (0.0, 1e-3)}[constant]
    rising = constant != "efficiency"  # time grows with K½ and t₀, falls with η
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if (at(mid) < 0.0) == rising:
            lo = mid
        else:
            hi = mid
    return GemmConstants(**{"efficiency": c.efficiency, "k_half": c.k_half, "latency_s": c.latency_s,
                            constant: 0.5 * (lo + hi)})


def fit_gemm_constants(points: tuple[KernelPoint, ...] = KERNEL_POINTS,
                       sweeps: int = 60) -> dict[tuple[str, str], GemmConstants]:
    """Fit every (GPU, precision)'s three constants on its points, each constant on its one point, in
    turn until they settle (Gauss–Seidel); an FP8 set takes ``t₀`` from its GPU's 16-bit set."""
    fits: dict[tuple[str, str], GemmConstants] = {}
    for key in sorted({(p.gpu, p.precision) for p in points}, key=lambda k: k[1] == "fp8"):
        mine = [p for p in points if (p.gpu, p.precision) == key]
        t0 = fits[(key[0], "bf16")].latency_s if key[1] == "fp8" else 0.0
        c = GemmConstants(efficiency=0.8, k_half=0.0, latency_s=t0)
        for _ in range(whole("sweeps", sweeps, low=1)):
            for p in mine:
                c = _solve(p.constant, p, c)
        fits[key] = c
    return fits
