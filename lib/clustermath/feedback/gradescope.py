"""The Gradescope autograder's otter plugin: grade each submission on its student's own case (issue 31).

``python tools/exercises.py autograder DIR --key-file PATH`` names ``DrawCase`` in the zip's
``otter_config.json`` for every chapter that declares a case, with the declaration (``Case.spec()``)
and the course key as its configuration. Before otter runs a submission, the plugin draws the case for
the submitter's e-mail from Gradescope's submission metadata (the first user's ``email``, as
``variants.identity`` normalises it: the roster's ``email`` column draws the same case for
``make variants``) and appends a cell that sets ``CASE`` to it. otter's tests read ``CASE`` from the
notebook's globals after the last cell, so they see that case, not the one the notebook holds. Without
an e-mail (``otter run`` on a laptop) the case is the book's default.

This runs in otter's grading process on Gradescope, where the notebook, otter and the tests share a
process (book/instructors.md says what that allows); the key stays out of the notebook: only the
drawn values are written into it.
"""
from __future__ import annotations

import nbformat
from otter.plugins import AbstractOtterPlugin

from .variants import Case, draw, identity

__all__ = ["DrawCase", "case_for_metadata"]


def case_for_metadata(config: dict, metadata: dict | None) -> Case:
    """The case of the submitter that Gradescope's ``submission_metadata`` names (default: none named)."""
    declared = Case.from_spec(config["spec"])
    users = (metadata or {}).get("users") or []
    email = users[0].get("email") if users and isinstance(users[0], dict) else None
    if not (isinstance(email, str) and "@" in email):
        return declared
    return draw(bytes.fromhex(config["key"]), identity(email), declared)


class DrawCase(AbstractOtterPlugin):
    """otter plugin: append ``CASE = <the submitter's case>`` to the submission before it runs."""

    def before_execution(self, submission):
        cell = case_for_metadata(self.plugin_config, self.submission_metadata).student_cell()
        if isinstance(submission, str):
            return submission + "\n\n" + cell + "\n"
        nb = nbformat.from_dict(submission)
        nb.cells.append(nbformat.v4.new_code_cell(cell))
        return nb
