"""Views of chapter 6 ("Do the models hold?"): not written yet.

The chapter's predicted-against-measured picture and its explorer belong here (issue 17,
part 3). The module exists now because every wing has a view module of its name
(``tests/test_layers.py``); the wing's data is in :mod:`clustermath.validation`.
"""
