"""Publishing pieces that need no browser: one repository URL, Binder's environment,
Colab's install cell (standard library plus PyYAML)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

import browsing

REPO = browsing.REPO


def test_repository_url_is_set_once():
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    url = config["repository"]["url"]
    assert url.startswith("https://"), url
    assert config["sphinx"]["local_extensions"]["repository_url"] == "tools/"
    # No other source file spells the URL out: the pages get it from the build.
    for path in [*REPO.glob("book/*.md"), REPO / "README.md"]:
        assert url not in path.read_text(encoding="utf-8"), f"{path.name} repeats {url}"
    assert "{{ install_line }}" in (REPO / "book" / "how_to_use.md").read_text(encoding="utf-8")


def test_install_line_rendered_from_the_config():
    page = browsing.HTML_DIR / "book" / "how_to_use.html"
    if not page.is_file():
        pytest.skip("the book is not built")
    url = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    html = page.read_text(encoding="utf-8")
    assert f"git+{url}" in html and "{{" not in html


def test_binder_installs_the_book_environment():
    lines = (REPO / "binder" / "requirements.txt").read_text(encoding="utf-8").split("\n")
    assert "-r ../requirements.txt" in lines
    assert (REPO / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


def test_chapters_start_with_the_colab_install_cell():
    result = subprocess.run([sys.executable, str(REPO / "tools" / "colab_cell.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
