"""Widget explorers and figures: thin views over the models.

``base`` holds ``LiveFigure``, ``Explorer`` and ``ModelView``; each other module
is one chapter's explorers and figures, named after the chapter's topic. Views
import models, never ``clustermath.feedback``.
"""
