"""Chapter 6, "Do the models hold?": the book's models composed and held against measured runs.

* ``predict``: ``predict_run``, one training step of a dense transformer from
  its shape, parallelism and hardware (FLOPs, bubble, exposed communication,
  stragglers), its calibrated constants and the rows they were fitted on;
* ``training_time``: the effective training-time ratio of a run that fails,
  checkpoints and restarts, and the days a token budget takes.
"""
from .predict import *  # noqa: F401,F403
from .predict import __all__ as _predict_all
from .training_time import *  # noqa: F401,F403
from .training_time import __all__ as _training_time_all

__all__ = [*_predict_all, *_training_time_all]
