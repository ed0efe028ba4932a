"""Sphinx extension: the repository URL, set once in _config.yml (`repository.url`),
offered to the book's pages as MyST substitutions.

Jupyter Book passes `repository.url` to the theme (html_theme_options
repository_url), which draws the launch, repository, edit and issue buttons
from it. This extension reads the same value at build time and defines

* {{ repository_url }}  the URL itself, and
* {{ install_line }}    the command that installs clustermath from it, as inline code
                         (book/how_to_use.md shows it for Colab),

so a maintainer who moves the repository changes one line of _config.yml.
"""

from __future__ import annotations


def install_command(url: str) -> str:
    return f'pip install "git+{url.rstrip("/")}"'


def _substitute(app, config):
    url = (config.html_theme_options or {}).get("repository_url") or ""
    if not url:
        return
    subs = dict(config.myst_substitutions or {})
    subs.setdefault("repository_url", url)
    subs.setdefault("install_line", f"`{install_command(url)}`")
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _substitute, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
