"""Options every test run shares.

``--shuffle SEED`` runs the collected tests in an order shuffled by SEED (an integer; ``random``
picks one and prints it), so a test that passes only after another one, or only in file order, is
found: `pytest tests --shuffle 1`, `--shuffle 2`, ... Without it pytest keeps file order. Tests of
one module that share a module-scoped fixture still work in any order, only slower.

Under pytest-xdist (`-n 2`, as `make unit` runs) every worker must collect the same tests in the same
order: the controller picks the seed (``random`` included) and hands it to each worker.
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


class _SeedToWorkers:
    """xdist hook: each worker shuffles with the controller's seed."""

    @staticmethod
    def pytest_configure_node(node) -> None:
        node.workerinput["shuffle_seed"] = node.config._shuffle_seed


def pytest_configure(config) -> None:
    worker = getattr(config, "workerinput", None)  # set in an xdist worker only
    config._shuffle_seed = worker["shuffle_seed"] if worker and "shuffle_seed" in worker else _seed(config)
    if config.pluginmanager.hasplugin("xdist") and worker is None:
        config.pluginmanager.register(_SeedToWorkers(), "shuffle-seed-to-workers")


def pytest_report_header(config) -> str | None:
    seed = getattr(config, "_shuffle_seed", None)
    return None if seed is None else f"test order shuffled with --shuffle {seed}"


def pytest_collection_modifyitems(session, config, items) -> None:
    seed = getattr(config, "_shuffle_seed", None)
    if seed is not None:
        random.Random(seed).shuffle(items)
