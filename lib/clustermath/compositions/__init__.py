"""Chapter 1's compositions: several models combined into what the chapter shows.

``worked_tables`` rebuilds source 000's ten worked tables, ``budget`` chains the
models into the peak-to-delivered budget, ``debug_lab`` replays the source's
debug lab. They belong to the model layer (pure, no widgets, no feedback) but
are not models of one topic, so they sit apart from the per-topic modules.
"""
