#!/usr/bin/env python3
"""Check `make lab` as a reader uses it (`make lab-check`; not part of `make test`).

Starts JupyterLab through `make lab` (headless, on 127.0.0.1, a random port in
8100-8999, a random token), opens a chapter in Debian's headless Chromium at
1366x900 and checks that:

1. the markdown cells are rendered by jupyterlab-myst: admonitions drawn as
   boxes, no directive or role left as raw text (```{note}, {ref}`...`), and
   the chapter not marked modified on opening. Citations are counted, not
   failed: jupyterlab-myst does not read book/references.bib, so it shows each
   {cite} key with a "Citation Not Found" mark;
2. Run > Run All Cells runs every code cell in a live kernel without an error;
3. one explorer's slider, moved with the keyboard (ArrowRight), changes its
   picture (and the key-press-to-new-picture time is reported).

Then it shuts the server down. JupyterLab's settings and workspaces go to a
scratch folder, with autosave off, so the check never rewrites a notebook (it
fails if one changed), and the .ipynb_checkpoints folders it caused are removed.
Screenshots: <out>/<chapter>-opened.png, -ran.png, -moved.png.

Usage: python tools/lab_check.py [notebooks/NN_x.ipynb ...] [--out _build/lab_check]
           [--make make] [--timeout 300]
Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "tools"))

from live_kernel import ARM_JS, CONTROL, STATE_JS, TAG_JS, free_port  # noqa: E402

DEFAULT_CHAPTER = "notebooks/01_peak_is_bought.ipynb"

# User settings for the check's JupyterLab only (JUPYTERLAB_SETTINGS_DIR): never save
# the notebook being run; every cell in the page (JupyterLab otherwise keeps only the
# cells near the viewport in the DOM, and the check reads them all); no news or
# update pop-up over the page.
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False,
    },
}

# A directive or role that reached the page as text: jupyterlab-myst did not render it.
RAW_MYST = re.compile(r"```\{|\{(?:note|warning|admonition|tip|important|ref|doc|term|numref|eq|math|cite(?::\w+)?|glue(?::\w+)?)\}")

# An admonition directive in a markdown cell's source (each must be drawn as a box).
ADMONITION = re.compile(
    r"^(?:```|:::)\{(?:admonition|note|warning|tip|important|caution|danger|seealso|hint|attention|error)\}",
    re.M,
)

MARKDOWN_JS = """
() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-MarkdownCell')];
  const rendered = cells.map(c => c.querySelector('.jp-Cell-inputArea .myst, .jp-RenderedMarkdown'))
    .filter(Boolean);
  return {
    cells: cells.length,
    myst: cells.filter(c => c.querySelector('.jp-Cell-inputArea .myst')).length,
    admonitions: document.querySelectorAll('.jp-Notebook .myst-admonition').length,
    text: rendered.map(e => e.innerText).join('\\n'),
    citations_unresolved: document.querySelectorAll('.jp-Notebook .myst [title="Citation Not Found"]').length,
    dirty: document.querySelectorAll('.lm-TabBar-tab.jp-mod-dirty').length,
  };
}
"""

PROMPTS_JS = """
() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')]
    .map(p => p.innerText.trim());
  const errors = [...document.querySelectorAll('.jp-Notebook [data-mime-type="application/vnd.jupyter.stderr"]')]
    .map(e => e.innerText).filter(t => /Error|Traceback/.test(t)).map(t => t.slice(0, 500));
  return {code: prompts.length, busy: prompts.filter(p => p.includes('*')).length,
          numbered: prompts.filter(p => /\\[\\d+\\]/.test(p)).length, errors};
}
"""


def api(base: str, token: str, path: str, method: str = "GET", timeout: float = 5):
    req = urllib.request.Request(
        f"{base}{path}", method=method, headers={"Authorization": f"token {token}"},
        data=b"" if method == "POST" else None,
    )
    with urllib.request.urlopen(req, timeout=timeout) as r:
        body = r.read()
    return json.loads(body) if body else None


def write_settings(folder: Path) -> None:
    for rel, values in SETTINGS.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


def start_lab(make: str, port: int, token: str, scratch: Path, log: Path) -> subprocess.Popen:
    """`make lab` with LAB_ARGS for a headless server on 127.0.0.1 (own process group)."""
    env = dict(os.environ)
    env.update(
        JUPYTERLAB_SETTINGS_DIR=str(scratch / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(scratch / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(scratch / "runtime"),
    )
    write_settings(scratch / "settings")
    lab_args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={token}"
    cmd = [*shlex.split(make), "--no-print-directory", "lab", f"LAB_ARGS={lab_args}"]
    out = open(log, "w")
    return subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)


def wait_server(proc: subprocess.Popen, base: str, token: str, log: Path, timeout_s: float) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"`make lab` exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            api(base, token, "/api/status", timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer within {timeout_s:.0f} s (see {log})")


def stop_lab(proc: subprocess.Popen, base: str, token: str) -> None:
    """Ask the server to shut down (it stops its kernels), then end the process group."""
    try:
        api(base, token, "/api/shutdown", method="POST")
    except OSError:
        pass
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def kernel_states(base: str, token: str) -> list[str]:
    return [k["execution_state"] for k in api(base, token, "/api/kernels")]


def wait_kernel_idle(base: str, token: str, timeout_s: float, quiet_s: float = 3) -> None:
    """Wait until a kernel runs and has stayed idle for quiet_s seconds."""
    deadline = time.time() + timeout_s
    idle_since = None
    while time.time() < deadline:
        states = kernel_states(base, token)
        if states and all(s == "idle" for s in states):
            idle_since = idle_since or time.time()
            if time.time() - idle_since >= quiet_s:
                return
        else:
            idle_since = None
        time.sleep(0.5)
    raise TimeoutError(f"the kernel was still busy (or never started) after {timeout_s:.0f} s")


def check_chapter(context, base: str, token: str, notebook: str, out: Path, timeout_s: float) -> dict:
    stem = Path(notebook).stem
    r: dict = {"chapter": notebook, "problems": [], "timings_s": {}}
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    # 1. Open the chapter; its markdown must be rendered by jupyterlab-myst.
    t = time.perf_counter()
    # A workspace of its own, reset, so no tab of an earlier chapter is restored.
    page.goto(f"{base}/lab/workspaces/check-{stem}/tree/{notebook}?reset&token={token}",
              wait_until="domcontentloaded", timeout=timeout_s * 1000)
    page.wait_for_selector(".jp-Notebook .jp-MarkdownCell :is(.myst, .jp-RenderedMarkdown)",
                           timeout=timeout_s * 1000)
    wait_kernel_idle(base, token, timeout_s)
    try:  # cells render one after another: wait until every markdown cell has its MyST view
        page.wait_for_function(
            "() => { const c = document.querySelectorAll('.jp-Notebook .jp-MarkdownCell');"
            " return c.length && [...c].every(x => x.querySelector('.jp-Cell-inputArea .myst'));}",
            timeout=60_000, polling=500,
        )
    except Exception:
        pass  # reported below, cell by cell
    md = page.evaluate(MARKDOWN_JS)
    r["timings_s"]["open"] = time.perf_counter() - t
    page.screenshot(path=str(out / f"{stem}-opened.png"))
    source = json.loads((REPO / notebook).read_text(encoding="utf-8"))
    expected_admonitions = sum(
        len(ADMONITION.findall("".join(c["source"])))
        for c in source["cells"] if c["cell_type"] == "markdown"
    )
    raw = sorted(set(RAW_MYST.findall(md["text"])))
    r["markdown"] = {k: md[k] for k in ("cells", "myst", "admonitions", "citations_unresolved")}
    r["markdown"]["admonitions_in_source"] = expected_admonitions
    if md["myst"] < md["cells"]:
        r["problems"].append(f"{md['cells'] - md['myst']} of {md['cells']} markdown cells not rendered by MyST")
    if md["admonitions"] < expected_admonitions:
        r["problems"].append(f"{md['admonitions']} admonitions drawn, {expected_admonitions} in the source")
    if raw:
        r["problems"].append(f"raw MyST markup on the page: {', '.join(raw)}")
    if md["dirty"]:
        r["problems"].append("the chapter is marked modified as soon as it opens (autosave would rewrite it)")

    # 2. Run > Run All Cells, as a reader would; every code cell must run without an error.
    t = time.perf_counter()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click(no_wait_after=True, timeout=timeout_s * 1000)
    time.sleep(2)
    wait_kernel_idle(base, token, timeout_s)
    runs = page.evaluate(PROMPTS_JS)
    r["timings_s"]["run_all"] = time.perf_counter() - t
    r["cells"] = {"code": runs["code"], "numbered": runs["numbered"], "busy": runs["busy"]}
    page.screenshot(path=str(out / f"{stem}-ran.png"))
    if runs["errors"]:
        r["problems"].append("errors in the outputs: " + " | ".join(runs["errors"][:3]))
    if runs["numbered"] < runs["code"] or runs["busy"]:
        r["problems"].append(f"{runs['numbered']} of {runs['code']} code cells ran ({runs['busy']} still busy)")

    # 3. Move the first explorer's slider with the keyboard: its picture must change.
    explorers = [e for e in page.evaluate(TAG_JS, CONTROL) if e["kind"] == "slider"]
    r["explorers_with_slider"] = len(explorers)
    if not explorers:
        r["problems"].append("no explorer with a slider after Run All")
    else:
        e = explorers[0]
        i = e["index"]
        r["moved"] = f"{e['title']} / {e['label']}"
        control = page.locator(f'[data-live-control="{i}"]')
        page.evaluate("(i) => document.querySelector(`[data-live-explorer=\"${i}\"]`)"
                      ".scrollIntoView({block: 'center'})", i)
        before = page.evaluate(STATE_JS, i)
        page.evaluate(ARM_JS, i)
        control.focus()
        t = time.perf_counter()
        control.press("ArrowRight")
        try:
            page.wait_for_function("() => window.__live.done !== null", timeout=20_000, polling=5)
            live = page.evaluate("() => window.__live")
            r["timings_s"]["slider_to_picture"] = (live["done"] - live["pressed"]) / 1000
        except Exception:
            r["timings_s"]["slider_to_picture"] = time.perf_counter() - t
            r["problems"].append("the picture did not change within 20 s of the key press")
        after = page.evaluate(STATE_JS, i)
        r["picture_changed"] = after["picture"] != before["picture"]
        r["table_changed"] = after["table"] != before["table"]
        if not r["picture_changed"] and not any("picture" in p for p in r["problems"]):
            r["problems"].append("the picture did not change")
        page.wait_for_timeout(300)
        page.screenshot(path=str(out / f"{stem}-moved.png"))
    if errors:
        r["problems"].append("page errors: " + " | ".join(errors[:3]))

    # Close the notebook's kernel, so the next chapter starts with a fresh one.
    for s in api(base, token, "/api/sessions"):
        api(base, token, f"/api/sessions/{s['id']}", method="DELETE")
    page.close()
    return r


def digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", default=[DEFAULT_CHAPTER])
    ap.add_argument("--out", type=Path, default=REPO / "_build" / "lab_check")
    ap.add_argument("--make", default=os.environ.get("MAKE", "make"))
    ap.add_argument("--timeout", type=float, default=300, help="seconds for each wait")
    args = ap.parse_args()
    import browsing

    args.out.mkdir(parents=True, exist_ok=True)
    watched = sorted((REPO / "notebooks").glob("*.ipynb")) + sorted((REPO / "exercises").glob("*.ipynb"))
    before = digest(watched)
    # JupyterLab writes a checkpoint folder beside every notebook it opens; remove the new ones.
    checkpoints = {(REPO / nb).parent / ".ipynb_checkpoints" for nb in args.notebooks}
    new_checkpoints = {c for c in checkpoints if not c.exists()}
    start = time.perf_counter()
    port, token = free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    scratch = Path(tempfile.mkdtemp(prefix="lab-check-"))
    log = args.out / "jupyterlab.log"
    results: list[dict] = []
    proc = start_lab(args.make, port, token, scratch, log)
    try:
        wait_server(proc, base, token, log, args.timeout)
        started = time.perf_counter() - start
        with browsing.chromium() as browser:
            context = browser.new_context(viewport={"width": 1366, "height": 900})
            for nb in args.notebooks:
                try:
                    results.append(check_chapter(context, base, token, nb, args.out, args.timeout))
                except Exception as exc:
                    results.append({"chapter": nb, "timings_s": {},
                                    "problems": [f"{type(exc).__name__}: {exc}"]})
            context.close()
    finally:
        stop_lab(proc, base, token)
        shutil.rmtree(scratch, ignore_errors=True)
        for c in new_checkpoints:
            shutil.rmtree(c, ignore_errors=True)
    total = time.perf_counter() - start
    if digest(watched) != before:
        results.append({"chapter": "notebooks/, exercises/", "timings_s": {},
                        "problems": ["a notebook file changed on disk during the check"]})
    print(f"JupyterLab (make lab) on 127.0.0.1:{port} answered after {started:.1f} s")
    for r in results:
        t = ", ".join(f"{k} {v:.1f} s" for k, v in r["timings_s"].items())
        print(f"{r['chapter']}: {t}")
        for key in ("markdown", "cells", "moved"):
            if key in r:
                print(f"  {key}: {r[key]}")
        print("  " + ("ok" if not r["problems"] else "PROBLEMS: " + "; ".join(r["problems"])))
    print(f"screenshots in {args.out}; total {total:.0f} s")
    (args.out / "lab_check.json").write_text(json.dumps(results, indent=1))
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
