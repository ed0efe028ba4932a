"""Chapter 6, "Do the models hold?": the book's models composed and held against measured runs.

* ``predict``: ``predict_run``, one training step of a dense transformer from
  its shape, parallelism and hardware (FLOPs, bubble, exposed communication,
  stragglers), typed as keywords; ``predict_step``, the same from the five records,
  as the sum of its parts (one function each); its calibrated constants and the
  rows they were fitted on;
* ``inputs``: a run's inputs as five frozen records, each checked where it is made
  (``ModelShape``, ``Layout``, ``Hardware``, ``Stack``, ``Constants``; ``check_fit``
  for what needs two of them), and the constants' defaults;
* ``flop_counts``: attention's FLOPs, full or causal, and a training step's FLOPs under each
  convention the sources count in (``step_flops``, ``convert_flop_rate``);
* ``gemm``: one GEMM's time from its shape (tiles, waves, split-K, a size term and a roofline),
  calibrated on published GEMM tables (``gemm_time``, ``KERNEL_POINTS``);
* ``kernels``: a layer's compute as the GEMMs its kernels run (linear layers, causal attention,
  the output layer), each timed by ``gemm_time`` (import by module: ``from
  clustermath.validation import kernels``);
* ``collectives``: a collective's time as NCCL's own tuner estimates it, rings of ``2(n−1)`` steps
  and trees of ``⌊log₂ N⌋`` levels at NCCL's per-step latencies, the faster taken (``predict_run``'s
  ``dp_latency="rings_trees"``; import by module);
* ``gpus``: the GPUs the measured runs use, as data (``Gpu`` records from the vendors'
  data sheets, cited; ``gpu(name)`` looks one up);
* ``training_time``: the effective training-time ratio of a run that fails,
  checkpoints and restarts, and the days a token budget takes;
* ``holdout``: calibrate, then validate: every family of the measurements
  against its model, with each row's role (calibration, validation, outside)
  and the error per family (``residuals()``, ``summary()``; needs pandas,
  so import it as ``from clustermath.validation import holdout``);
* ``ablation``: what each of issue 43's switches (GPU by name, causal attention, kernel-timed
  GEMMs, NCCL's rings and trees for the data-parallel collectives) moves, per source, on the rows ``holdout`` validates (needs pandas: import by module);
* ``measurements``: published measurements of real training runs, as data
  (``load_measurements()`` returns the shipped ``measurements.csv`` as a pandas
  DataFrame; ``family()``, ``run_config()``, ``cross_checks()`` and
  ``DISAGREEMENTS``). It needs pandas, so it is imported on first use:
  ``from clustermath.validation import load_measurements`` works, and a plain
  ``import clustermath`` does not load pandas.
"""
from importlib import import_module

from .flop_counts import *  # noqa: F401,F403
from .flop_counts import __all__ as _flop_counts_all
from .gemm import *  # noqa: F401,F403
from .gemm import __all__ as _gemm_all
from .gpus import *  # noqa: F401,F403
from .gpus import __all__ as _gpus_all
from .inputs import *  # noqa: F401,F403
from .inputs import __all__ as _inputs_all
from .predict import *  # noqa: F401,F403
from .predict import __all__ as _predict_all
from .training_time import *  # noqa: F401,F403
from .training_time import __all__ as _training_time_all

_MEASUREMENTS = (
    "CSV_NAME", "Check", "DISAGREEMENTS", "DISAGREEMENT_KINDS", "Disagreement", "FAMILIES", "KNOWN_UNITS",
    "LLAMA3_TABLE5", "MODEL_INPUTS", "PREDICT_RUN_INPUTS", "assumed_columns", "comparable", "cross_checks", "csv_path",
    "disagreements", "family", "load_measurements", "peak_basis", "printed", "run_config",
)

__all__ = [*_flop_counts_all, *_gemm_all, *_gpus_all, *_inputs_all, *_predict_all, *_training_time_all]
"""What ``from clustermath import *`` takes from this wing (the measurements' names are imported by name)."""


def __getattr__(name: str):
    if name == "DISAGREEMENTS":
        return import_module(".measurements", __name__).disagreements()
    if name in _MEASUREMENTS:
        return getattr(import_module(".measurements", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
