"""Chapter 2, "Something is always broken": interruptions, the checkpoint interval, goodput.

* ``interruptions``: the published interruption record (Llama 3 405B), a GPU's
  failure rate and a job's mean time between interruptions, Young's and Daly's
  checkpoint intervals and what they lose, source 003's interruption table for any
  GPU count, and asynchronous checkpointing;
* ``goodput``: stragglers at scale, goodput against availability, ejecting a slow
  node, and the blast radius of a failure.
"""
from .interruptions import *  # noqa: F401,F403
from .interruptions import __all__ as _interruptions_all
from .goodput import *  # noqa: F401,F403
from .goodput import __all__ as _goodput_all

__all__ = [*_interruptions_all, *_goodput_all]
