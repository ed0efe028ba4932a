"""The GitHub Actions workflow keeps what makes it work on GitHub's Ubuntu 24.04 runners.

It cannot run here; this test reads it. Each assertion guards a step whose loss
would only show on GitHub, as a red run or a book that never publishes:

* the browser: Ubuntu has no `chromium` package (apt finds only the snap's
  wrapper), so the job points CHROMIUM at the image's own Google Chrome and
  installs no browser;
* bubblewrap: installed, allowed to create user namespaces despite Ubuntu's
  AppArmor restriction (the sysctl, or an AppArmor profile for bwrap) in a step
  of its own, and probed once before `make test`, so a runner that cannot
  sandbox fails at that step with bubblewrap's reason;
* publishing: the site `make test` built is uploaded and deployed to Pages.

actionlint (in `make test`) checks the syntax and the expressions.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOW = REPO / ".github" / "workflows" / "book.yml"


@pytest.fixture(scope="module")
def jobs() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))["jobs"]


def step_index(steps: list[dict], pattern: str) -> int:
    """Index of the first step whose `run` matches pattern (-1 if none)."""
    return next((i for i, s in enumerate(steps) if re.search(pattern, s.get("run", ""))), -1)


def test_test_job_runs_make_test_on_ubuntu_24_04(jobs):
    job = jobs["test"]
    assert job["runs-on"] == "ubuntu-24.04", "the steps below are written for Ubuntu 24.04's image"
    assert step_index(job["steps"], r"^make test\s*$") >= 0


def test_browser_is_the_images_chrome(jobs):
    job = jobs["test"]
    make_test = job["steps"][step_index(job["steps"], r"^make test\s*$")]
    chromium = {**job.get("env", {}), **make_test.get("env", {})}.get("CHROMIUM", "")
    assert chromium == "/usr/bin/google-chrome", f"CHROMIUM is {chromium!r}"
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    assert not re.search(r"apt-get install[^\n]*chromium", runs), "Ubuntu 24.04 has no chromium package"


def test_bubblewrap_installed_unrestricted_and_probed_before_make_test(jobs):
    steps = jobs["test"]["steps"]
    install = step_index(steps, r"apt-get install[^\n]*\bbubblewrap\b")
    unrestrict = step_index(
        steps, r"sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0|apparmor_parser[^\n]*bwrap")
    probe = step_index(steps, r"\bbwrap\b[^\n]*--unshare-all[^\n]*\btrue\b")
    make_test = step_index(steps, r"^make test\s*$")
    assert install >= 0, "no step installs bubblewrap"
    assert unrestrict >= 0, "no step lifts Ubuntu's AppArmor restriction on user namespaces for bwrap"
    assert probe >= 0, "no step probes bwrap before make test"
    assert install < unrestrict < probe < make_test, (install, unrestrict, probe, make_test)
    # Each in a step of its own, so the failing step names the cause.
    assert len({install, unrestrict, probe, make_test}) == 4
    assert steps[probe].get("continue-on-error") in (None, False)
    assert "exit 1" in steps[probe]["run"] or "set -e" in steps[probe]["run"] or \
        steps[probe]["run"].strip().startswith("bwrap"), "the probe must fail its step"


def test_site_that_was_tested_is_published(jobs):
    uploads = [s for s in jobs["test"]["steps"] if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@")]
    assert len(uploads) == 1 and uploads[0]["with"]["path"] == "_build/html"
    assert "main" in uploads[0]["if"] and "push" in uploads[0]["if"]
    deploy = jobs["deploy"]
    assert deploy["needs"] == "test"
    assert any(str(s.get("uses", "")).startswith("actions/deploy-pages@") for s in deploy["steps"])
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


def test_actionlint_stays_in_make_test():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^test:(.*)$", makefile, re.M)
    assert target and "actionlint" in target.group(1).split()
