"""Feedback for chapter 6's exercises ("Do the models hold?"): not written yet.

The misconception catalogue of the chapter's exercises belongs here (issue 17, part 4).
The module exists now because every wing has a feedback module of its name
(``tests/test_layers.py``); the wing's data is in :mod:`clustermath.validation`.
"""
