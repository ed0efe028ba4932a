"""Options every test run shares.

``--shuffle SEED`` runs the collected tests in an order shuffled by SEED (an integer; ``random``
picks one and prints it), so a test that passes only after another one, or only in file order, is
found: `pytest tests --shuffle 1`, `--shuffle 2`, ... Without it pytest keeps file order. Tests of
one module that share a module-scoped fixture still work in any order, only slower.
"""
from __future__ import annotations

import random


def pytest_addoption(parser) -> None:
    parser.addoption("--shuffle", default=None, metavar="SEED",
                     help="run the tests in an order shuffled by SEED (an integer, or 'random')")


def _seed(config) -> int | None:
    value = config.getoption("--shuffle")
    if value is None:
        return None
    if value == "random":
        return random.SystemRandom().randrange(10**6)
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"--shuffle: an integer seed or 'random', not {value!r}") from None


def pytest_configure(config) -> None:
    config._shuffle_seed = _seed(config)


def pytest_report_header(config) -> str | None:
    seed = getattr(config, "_shuffle_seed", None)
    return None if seed is None else f"test order shuffled with --shuffle {seed}"


def pytest_collection_modifyitems(session, config, items) -> None:
    seed = getattr(config, "_shuffle_seed", None)
    if seed is not None:
        random.Random(seed).shuffle(items)
