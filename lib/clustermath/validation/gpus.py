"""Chapter 6: the GPUs the measured runs use, as data (issue 43, item 4).

One frozen ``Gpu`` record per part, its numbers checked where the record is made, and
``gpu(name)`` to look one up by the name ``measurements.csv`` writes in ``gpu_type``
(``H100-SXM5-80GB``) or a short alias where the short name is unambiguous (``H100``).

Units: dense (no 2:4 sparsity) tensor-core peaks in TFLOP/s (1e12 FLOP/s); HBM bandwidth in
TB/s (1e12 bytes/s); the scale-up (NVLink) bandwidth in GB/s **per GPU and direction**, the
convention of ``predict_run`` (NVIDIA's data sheets print both directions together: 900 GB/s
for an H100 SXM is 450 each way); the scale-up domain in GPUs (one NVSwitch fabric).

Where the numbers come from. NVIDIA's data sheets print peaks *with* sparsity and mark them
"with sparsity; half without": every dense value here is that half. Values read from a page
that reproduces or cites the vendor's sheet, not from the sheet itself, are listed in each
record's ``second_hand`` with the page in ``source``. The streaming-multiprocessor counts are
not data-sheet values (``sms`` is always second-hand): ``deviceQuery`` output or architecture
write-ups.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..validate import real, whole

__all__ = ["GPUS", "GPU_ALIASES", "GPU_PRECISIONS", "Gpu", "gpu"]

GPU_PRECISIONS = ("bf16", "fp16", "fp8", "tf32")
"""Tensor-core precisions a ``Gpu`` prints a dense peak for (``bf16`` and ``fp16`` share one)."""


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU part: its dense peaks, memory, scale-up wire and domain, with where each came from.

    ``fp8_tflops = 0`` means the part has no FP8 tensor cores (A100): asking for its FP8 peak
    raises. Every other number must be positive, and the peaks ordered as tensor cores run
    them (TF32 at most the 16-bit rate, FP8 at least it); ``ValueError`` names the field.
    """

    name: str
    bf16_tflops: float
    """Dense BF16 (= FP16) tensor-core peak, TFLOP/s."""
    fp8_tflops: float
    """Dense FP8 tensor-core peak, TFLOP/s (0: no FP8)."""
    tf32_tflops: float
    """Dense TF32 tensor-core peak, TFLOP/s."""
    memory_TBps: float
    """HBM bandwidth, TB/s."""
    memory_GB: float
    """HBM capacity, GB."""
    scale_up_GBps: float
    """NVLink bandwidth per GPU and direction, GB/s (half the data sheet's bidirectional figure)."""
    scale_up_gpus: int
    """GPUs in one NVLink (NVSwitch) domain: 8 for an HGX/DGX board, 72 for a GB200 NVL72 rack."""
    sms: int
    """Streaming multiprocessors (the waves of a GEMM are counted in them)."""
    source: str
    """The data sheet each number is from, and the page it was read on where that is not the sheet."""
    second_hand: tuple[str, ...] = ()
    """Fields read only on a page that reproduces or cites the vendor's sheet."""
    timed_bf16_tflops: float = 0.0
    """The 16-bit peak ``predict_run`` times this part at, TFLOP/s, where it is not the data sheet's
    (0: the data sheet's ``bf16_tflops``). A GB200 is timed at the B200's 2,250: the same die (148 SMs,
    8 TB/s of HBM3e), whose data sheets differ by the clock a 1,200 W rather than a 1,000 W limit
    allows, and Megatron-Bridge's archive measures the five runs it prints on both 0.93 to 1.05 times as
    fast per GPU on a GB200 as on a B200, never the 1.11 the sheets' peaks give (``later.gb200_over_b200``,
    chapter 6's later releases). Chosen after those releases' GB200 runs were seen: the chapter says so."""
    scale_out_GBps: float = 0.0
    """Scale-out (NIC) bandwidth per GPU and direction in the part's reference system, GB/s: one 400 Gbps
    ConnectX-7 per GPU in a DGX/HGX H100, H200 or B200 and in a GB200 NVL72 compute tray (50), one
    200 Gbps HDR port per GPU in a DGX A100 (25); 0: the record names no system, and a run must give it.
    A cluster built otherwise (fewer NICs, RoCE at another rate) gives its own ``scale_out_GBps``."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        bf16 = real("bf16_tflops", self.bf16_tflops, low_open=True, unit="TFLOP/s")
        real("tf32_tflops", self.tf32_tflops, low_open=True, high=bf16, unit="TFLOP/s")
        fp8 = real("fp8_tflops", self.fp8_tflops, unit="TFLOP/s")
        if fp8 and fp8 < bf16:
            raise ValueError(f"fp8_tflops must be 0 (no FP8) or a number in [{bf16:g}, inf) TFLOP/s "
                             f"(at least bf16_tflops), got {self.fp8_tflops!r}")
        real("memory_TBps", self.memory_TBps, low_open=True, unit="TB/s")
        real("memory_GB", self.memory_GB, low_open=True, unit="GB")
        real("scale_up_GBps", self.scale_up_GBps, low_open=True, unit="GB/s")
        whole("scale_up_gpus", self.scale_up_gpus, low=1, unit="GPUs")
        whole("sms", self.sms, low=1)
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"source must be a non-empty string naming the data sheet, got {self.source!r}")
        if self.timed_bf16_tflops:
            real("timed_bf16_tflops", self.timed_bf16_tflops, low_open=True, high=bf16, unit="TFLOP/s")
        real("scale_out_GBps", self.scale_out_GBps, unit="GB/s")
        known = {f.name for f in fields(self)}
        if not isinstance(self.second_hand, tuple) or any(f not in known for f in self.second_hand):
            raise ValueError(f"second_hand must be a tuple of field names of Gpu, got {self.second_hand!r}")

    def peak_tflops(self, precision: str = "bf16") -> float:
        """Dense tensor-core peak at ``precision`` (one of ``GPU_PRECISIONS``), TFLOP/s."""
        if precision not in GPU_PRECISIONS:
            raise ValueError(f"precision must be one of {list(GPU_PRECISIONS)!r}, got {precision!r}")
        if precision == "fp8" and not self.fp8_tflops:
            raise ValueError(f"precision must not be 'fp8' on {self.name}: it has no FP8 tensor cores")
        return {"bf16": self.bf16_tflops, "fp16": self.bf16_tflops, "fp8": self.fp8_tflops,
                "tf32": self.tf32_tflops}[precision]

    @property
    def timed_share(self) -> float:
        """``timed_bf16_tflops`` over the data sheet's ``bf16_tflops`` (1 where the record gives none): the
        share of each data-sheet peak the model times the part at, at every precision."""
        return self.timed_bf16_tflops / self.bf16_tflops if self.timed_bf16_tflops else 1.0

    @property
    def run_inputs(self) -> dict[str, float | int]:
        """The hardware keywords of ``predict_run`` this record fills: 16-bit peak (``timed_bf16_tflops``
        where the record gives one, so a GB200's predicted MFU is on 2,250 TFLOP/s), NVLink, domain, HBM,
        and the reference system's NIC rate per GPU where the record names one (``scale_out_GBps``)."""
        return {"peak_tflops": self.timed_bf16_tflops or self.bf16_tflops, "scale_up_GBps": self.scale_up_GBps,
                "scale_up_gpus": self.scale_up_gpus, "memory_TBps": self.memory_TBps,
                **({"scale_out_GBps": self.scale_out_GBps} if self.scale_out_GBps else {})}


_A100_SHEET = ("NVIDIA A100 Tensor Core GPU data sheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): "
               "312 TFLOP/s BF16/FP16 and 156 TF32 dense (624 and 312 with sparsity), NVLink 600 GB/s; "
               "read second-hand on glennklockwood.com/garden/processors/A100 (which cites that sheet) and "
               "the Paderborn PC2 wiki page 'NVIDIA A100 40GB with NVLINK' (its deviceQuery prints 108 "
               "multiprocessors)")
_HOPPER_SHEET = ("table reproduced by HPC Tech (archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html): "
                 "1,979 BF16/FP16, 3,958 FP8, 989 TF32 TFLOP/s with sparsity ('1/2 lower without'), "
                 "132 SMs, NVLink 900 GB/s; dense values also on glennklockwood.com/garden/processors/h100 "
                 "(989.4 BF16; the measurements' rows round it to 989, kept here)")
# every value of these records was read second-hand (no vendor PDF could be opened here); the A100
# has no FP8, so its zero FP8 peak is no reading
_ALL_READ_SECOND_HAND = ("bf16_tflops", "fp8_tflops", "tf32_tflops", "memory_TBps", "memory_GB",
                         "scale_up_GBps", "sms")
_A100_READ_SECOND_HAND = tuple(name for name in _ALL_READ_SECOND_HAND if name != "fp8_tflops")
_BLACKWELL_BRIEF = ("NVIDIA Blackwell architecture technical brief, as tabulated on "
                    "glennklockwood.com/garden/processors/B200 (dense: HGX B200 at 1,000 W 2,250 BF16, 4,500 "
                    "FP8, 1,100 TF32; GB200 at 1,200 W 2,500, 5,000, 1,250 TFLOP/s); 8 TB/s HBM3e and NVLink 5 "
                    "at 1.8 TB/s per GPU on the same page; 148 SMs from Chips and Cheese's B200 article "
                    "('74 SMs per die', two dies)")

_NIC_A100 = ("; scale-out 25 GB/s: eight 200 Gbps HDR InfiniBand ports per 8-GPU node, as Narayanan et al. "
             "(2021, §5) describe Selene's DGX A100 nodes")
_NIC_H100 = ("; scale-out 50 GB/s: a 400 Gbps port per GPU, as Llama 3's H100 cluster has it (Grattafiori et al. "
             "2024, §3.3.1) and as the measurements' DGX H100 rows assume")
_NIC_H200 = ("; scale-out 50 GB/s: a 400 Gbps port per GPU, assumed the same as an H100 node's")
_NIC_B200 = ("; scale-out 50 GB/s: eight 400 Gbps ConnectX-7 NDR ports per 8-GPU node in an MLPerf system file "
             "(mlcommons/inference_results_v6.0, closed/Nebius/systems/nebius_b200_n1.json)")
_NIC_GB200 = ("; scale-out 50 GB/s: four ConnectX-7 NICs per 4-GPU compute tray in an MLPerf system file "
              "(mlcommons/inference_results_v6.1, closed/Crusoe/systems/GB200-NVL72_GB200-186GB_aarch64x16_"
              "Dynamo.json); their rate, 400 Gbps, is the ConnectX-7's and is assumed, not printed there")

GPUS: dict[str, Gpu] = {g.name: g for g in (
    Gpu("A100-SXM4-40GB", bf16_tflops=312.0, fp8_tflops=0.0, tf32_tflops=156.0, memory_TBps=1.555,
        memory_GB=40.0, scale_up_GBps=300.0, scale_up_gpus=8, sms=108,
        source=_A100_SHEET + "; HBM2 1,555 GB/s (40 GB part)" + _NIC_A100,
        second_hand=_A100_READ_SECOND_HAND, scale_out_GBps=25.0),
    Gpu("A100-SXM4-80GB", bf16_tflops=312.0, fp8_tflops=0.0, tf32_tflops=156.0, memory_TBps=2.039,
        memory_GB=80.0, scale_up_GBps=300.0, scale_up_gpus=8, sms=108,
        source=_A100_SHEET + "; HBM2e 2,039 GB/s (80 GB part)" + _NIC_A100,
        second_hand=_A100_READ_SECOND_HAND, scale_out_GBps=25.0),
    Gpu("H100-SXM5-80GB", bf16_tflops=989.0, fp8_tflops=1979.0, tf32_tflops=494.5, memory_TBps=3.35,
        memory_GB=80.0, scale_up_GBps=450.0, scale_up_gpus=8, sms=132,
        source="NVIDIA H100 Tensor Core GPU data sheet, H100 SXM column: " + _HOPPER_SHEET
        + "; HBM3 3,350 GB/s" + _NIC_H100,
        second_hand=_ALL_READ_SECOND_HAND, scale_out_GBps=50.0),
    Gpu("H200-SXM-141GB", bf16_tflops=989.0, fp8_tflops=1979.0, tf32_tflops=494.5, memory_TBps=4.8,
        memory_GB=141.0, scale_up_GBps=450.0, scale_up_gpus=8, sms=132,
        source="NVIDIA H200 Tensor Core GPU data sheet, H200 SXM column: the H100 SXM's tensor-core peaks "
        "(same GH100 die and clocks), 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s; read on "
        "lzwjava.github.io/nvidia-h200-gpu-specs-en and aiwiki.ai/wiki/nvidia_h200, peaks as for the "
        "H100 (" + _HOPPER_SHEET + ")" + _NIC_H200,
        second_hand=_ALL_READ_SECOND_HAND, scale_out_GBps=50.0),
    Gpu("B200-SXM-180GB", bf16_tflops=2250.0, fp8_tflops=4500.0, tf32_tflops=1100.0, memory_TBps=8.0,
        memory_GB=180.0, scale_up_GBps=900.0, scale_up_gpus=8, sms=148,
        source="DGX/HGX B200 (8 GPUs, 1,000 W each): " + _BLACKWELL_BRIEF
        + "; 180 GB as MLPerf's system files name the part (B200-SXM-180GB)" + _NIC_B200,
        second_hand=_ALL_READ_SECOND_HAND, scale_out_GBps=50.0),
    Gpu("GB200-NVL72", bf16_tflops=2500.0, fp8_tflops=5000.0, tf32_tflops=1250.0, memory_TBps=8.0,
        memory_GB=186.0, scale_up_GBps=900.0, scale_up_gpus=72, sms=148,
        source="GB200 NVL72 (72 GPUs in one NVLink domain, 1,200 W each): " + _BLACKWELL_BRIEF
        + "; 186 GB as MLPerf's GB200 system files print it. A GPU catalogue page (gpu.blog) prints 2,640 "
        "BF16 dense instead: not used. Timed at the B200's 2,250 (``timed_bf16_tflops``: the same die)"
        + _NIC_GB200,
        second_hand=_ALL_READ_SECOND_HAND, timed_bf16_tflops=2250.0, scale_out_GBps=50.0),
)}
"""Every GPU the measurements use, by the name ``measurements.csv`` gives it (``gpu_type``)."""

GPU_ALIASES = {"H100": "H100-SXM5-80GB", "H100-SXM": "H100-SXM5-80GB", "H100-SXM5": "H100-SXM5-80GB",
               "H100-80GB": "H100-SXM5-80GB", "H200": "H200-SXM-141GB", "H200-SXM": "H200-SXM-141GB",
               "H200-141GB": "H200-SXM-141GB", "B200": "B200-SXM-180GB", "B200-SXM": "B200-SXM-180GB",
               "B200-180GB": "B200-SXM-180GB", "GB200": "GB200-NVL72", "A100": "A100-SXM4-80GB",
               "A100-SXM4": "A100-SXM4-80GB", "A100-80GB": "A100-SXM4-80GB", "A100-40GB": "A100-SXM4-40GB",
               "A100-SXM": "A100-SXM4-80GB", "A100-SXM-80GB": "A100-SXM4-80GB", "A100-SXM-40GB": "A100-SXM4-40GB",
               "A100-SXM4-80G": "A100-SXM4-80GB", "A100-SXM4-40G": "A100-SXM4-40GB", "H100-SXM-80GB": "H100-SXM5-80GB",
               "H100-SXM5-80G": "H100-SXM5-80GB", "H200-SXM5": "H200-SXM-141GB", "B200-SXM6": "B200-SXM-180GB",
               "GB200-NVL": "GB200-NVL72"}
"""Short names of one part. A bare ``A100`` (or ``A100-SXM4``) is the 80 GB part, the one training
runs since 2021 use: the two A100 SXM4 parts share every peak and the NVLink, and differ only in HBM
(2.039 against 1.555 TB/s), which moves the memory-bound terms alone; name ``A100-40GB`` for the other."""


_VENDOR_PREFIXES = ("NVIDIA", "DGX", "HGX")
"""What a name may start with beside the part: the vendor (as ``nvidia-smi`` prints it) or the system
(``DGX-H100``, the way NeMo's and Megatron-Bridge's performance tables name the GPU)."""
_MEMORY_SUFFIXES = ("HBM3E", "HBM3", "HBM2E", "HBM2")
"""What a name may end with beside the part: its memory's type (``NVIDIA H100 80GB HBM3``)."""


def _spelling(name: str) -> str:
    """A name as ``gpu`` compares it: upper case, without spaces, hyphens, underscores or slashes, and
    without a leading vendor or system (``NVIDIA``, ``DGX``, ``HGX``) or a trailing memory type (``HBM3``):
    ``h100 sxm5 80gb``, ``H100_SXM5_80GB``, ``DGX-H100`` and ``NVIDIA H100 80GB HBM3`` name one part."""
    spelled = "".join(ch for ch in name.upper() if ch not in " -_/")
    for prefix in _VENDOR_PREFIXES:
        spelled = spelled.removeprefix(prefix)
    for suffix in _MEMORY_SUFFIXES:
        spelled = spelled.removesuffix(suffix)
    return spelled


_BY_SPELLING: dict[str, str] = {_spelling(k): v for k, v in (*((n, n) for n in GPUS), *GPU_ALIASES.items())}


def gpu(name: str) -> Gpu:
    """The ``Gpu`` record of ``name``: a key of ``GPUS`` or of ``GPU_ALIASES``, in any case and with
    spaces, hyphens or underscores anywhere, a vendor or system before it and a memory type after it
    (``_spelling``: ``"h100 sxm"``, ``"DGX-H100"`` and ``"NVIDIA H100 80GB HBM3"`` are ``"H100-SXM5-80GB"``).
    A part the table does not hold (an H100 PCIe or NVL, an H800, a GB300, an MI300X) raises ``ValueError``
    with the names it knows."""
    if isinstance(name, str):
        found = _BY_SPELLING.get(_spelling(name))
        if found is not None:
            return GPUS[found]
    raise ValueError(f"name must name one of the parts {sorted(GPUS)!r} or a short name of one (such as 'H100' or "
                     f"'DGX-B200'; any case, spaces, hyphens and underscores ignored), got {name!r}")
