"""The built site (either edition) carries student-kit.zip at its root, as book/_ext/student_kit.py
makes it from the repository: the files tests/test_student_kit.py checks, byte for byte."""
from __future__ import annotations

import importlib.util
import zipfile

from built_site import HTML_DIR, REPO

_spec = importlib.util.spec_from_file_location("student_kit", REPO / "book" / "_ext" / "student_kit.py")
kit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kit)


def test_the_site_carries_the_student_kit():
    path = HTML_DIR / kit.KIT_NAME
    assert path.is_file(), f"no {kit.KIT_NAME} at the root of {HTML_DIR}"
    with zipfile.ZipFile(path) as z:
        shipped = {n.removeprefix(kit.FOLDER + "/"): z.read(n) for n in z.namelist()}
    assert shipped == kit.kit_members(REPO), "the site's kit is not the repository's exercises and package"


def test_the_exercise_pages_and_the_front_page_link_the_kit():
    for page in ["book/intro.html", *[f"exercises/ch0{i}_exercises.html" for i in range(1, 7)]]:
        text = (HTML_DIR / page).read_text(encoding="utf-8")
        assert f'href="../{kit.KIT_NAME}"' in text, f"{page} does not link the student kit"
        assert "clone of the book" not in text, f"{page} still sends students to the repository"
