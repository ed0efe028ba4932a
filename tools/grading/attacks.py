"""Build a folder of hostile and honest submissions from the current exercises.

Usage::

    python tools/grading/attacks.py FOLDER --canary FILE [--cache DIR] [--out DIR]

Every cheat is the unmodified student copy of chapter 1 (``exercises/``) plus
one cell doing the cheat, so the folder follows the exercises as they change.
Each cheat must score 0 on every question (it solves none). The honest
variants start from the master's solutions (``solutions/``, markers removed,
tests left out) and must keep the marks their answers deserve. The paths a
determined student would find (the repository, the submissions folder, the
output folder, the grading cache, the canary files) are written into the
notebooks, as if the student knew the layout.

``MANIFEST`` (below) says, for each file, what the grader must make of it;
``tests/test_grading_sandbox.py`` builds the folder, grades it and checks.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import pathlib
import sys

import nbformat

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import exercises  # noqa: E402

MARKER = "GRADING-ATTACK-SURVIVOR"
"""Every process a cheat starts carries this in its command line; none may outlive the batch."""


def _student(stem: str = "ch01_exercises") -> nbformat.NotebookNode:
    return nbformat.read(exercises.EXERCISES / f"{stem}.ipynb", as_version=4)


def _is_test(source: str) -> bool:
    body = source.lstrip()
    return body.startswith("def test_") or (body.startswith("# HIDDEN") and "def test_" in body)


def solved(stem: str = "ch01_exercises") -> nbformat.NotebookNode:
    """A student notebook whose code cells are the master's solutions (what a perfect student hands in)."""
    master = nbformat.read(exercises.SOLUTIONS / f"{stem}.ipynb", as_version=4)
    nb = _student(stem)
    cells = [c for c in nb.cells if c.cell_type == "code" and exercises._is_plumbing(c)][:1]
    for cell in master.cells:
        if cell.cell_type == "code" and not _is_test(cell.source):
            cells.append(nbformat.v4.new_code_cell(exercises._without_markers(cell.source)))
    nb.cells = cells
    return nb


def _with_cell(nb: nbformat.NotebookNode, code: str, *, first: bool = False) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    cell = nbformat.v4.new_code_cell(code)
    if first:
        # after otter's init cell and the imports, before the answers
        nb.cells.insert(3, cell)
    else:
        nb.cells.append(cell)
    return nb


def cheats(paths: dict[str, str]) -> dict[str, str]:
    """Cell code for each attack class; ``paths`` are the places a student would aim at."""
    p = json.dumps(paths)
    return {
        "patch_otter": """
import otter.test_files.exception_test as _et
_et.test_case.call_func = lambda self, env: None
import otter.test_files.abstract_test as _at
_at.TestFile.score = property(lambda self: 1.0)
""",
        "patch_feedback": """
import clustermath.feedback as _fb, clustermath.feedback.core as _core
for _m in (_fb, _core):
    _m.expect = _m.reject = _m.require = lambda *a, **k: None
    _m.expect_call = lambda *a, **k: None
_core._close = lambda *a, **k: True
""",
        "patch_pickle": """
import pickle, dill
def _forged(obj, f, *a, **k):
    f.write(b'full marks please')
pickle.dump = dill.dump = _forged
pickle.dumps = lambda *a, **k: b'full marks please'
""",
        "patch_builtins": """
import builtins, math
builtins.abs = lambda x: 0
builtins.isinstance = lambda *a: True
math.isclose = lambda *a, **k: True
import numpy as np
np.isclose = np.allclose = lambda *a, **k: True
""",
        "float_subclass": """
import sys
class _Sneaky(float):
    def _peek(self):
        f = sys._getframe(1)
        while f is not None:
            for k in ('expected', 'want', 'right', 'value'):
                v = f.f_locals.get(k)
                if type(v) in (int, float):
                    return float(v)
            f = f.f_back
        return 0.0
    def __float__(self): return self._peek()
    def __eq__(self, other): return True
    def __sub__(self, other): return 0.0
    def __rsub__(self, other): return 0.0
    __hash__ = float.__hash__
for _name in [n for n, v in list(globals().items()) if v is ... and not n.startswith('_')]:
    globals()[_name] = _Sneaky(0.0)
""",
        "read_solutions": f"""
import json, pathlib, sys, clustermath
_paths = {p}
_found = []
_roots = [pathlib.Path(clustermath.__file__).resolve().parents[2], pathlib.Path(sys.executable).resolve().parents[2],
          pathlib.Path(sys.prefix).resolve().parent, pathlib.Path(_paths['repo'])]
for _root in _roots:
    for _master in sorted((_root / 'solutions').glob('ch01*.ipynb')) if (_root / 'solutions').is_dir() else []:
        _found.append(_master)
for _master in _found[:1]:
    for _cell in json.load(open(_master))['cells']:
        _src = ''.join(_cell['source'])
        if _cell['cell_type'] == 'code' and 'def test_' not in _src:
            try:
                exec(_src, globals())
            except Exception:
                pass
""",
        "read_tests": f"""
import glob, os, pathlib
_paths = {p}
_stolen = []
for _pattern in ['tests/*', '../tests/*', '/tmp/*/tests/*', '/tmp/*/*/tests/*', _paths['cache'] + '/*',
                 _paths['repo'] + '/solutions/*.ipynb', _paths['out'] + '/*']:
    for _f in glob.glob(_pattern):
        try:
            _stolen.append(open(_f, errors='replace').read(2000))
        except OSError:
            pass
for _pid in os.listdir('/proc'):
    try:
        _stolen.append(open(f'/proc/{{_pid}}/cmdline').read().replace(chr(0), ' '))
    except OSError:
        pass
q10_implied_by = ('STOLEN: ' + ' | '.join(_stolen))[:50000] if _stolen else 'nothing found'
""",
        "detached_rewriter": f"""
import json, os, subprocess, sys
_paths = {p}
_code = '''
import os, sys, time, json
time.sleep(4)
p = json.loads(sys.argv[1])
for target in [p['out'] + '/results.jsonl', p['out'] + '/files.csv', p['canary']]:
    try:
        open(target, 'a').write('forged row,10\\\\n')
    except OSError:
        pass
time.sleep(600)
'''
for _i in range(2):
    subprocess.Popen([sys.executable, '-c', _code, json.dumps(_paths), '{MARKER}'], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""",
        "overwrite_others": f"""
import glob, os, pathlib, shutil
_paths = {p}
for _f in glob.glob(_paths['submissions'] + '/**/*', recursive=True):
    try:
        open(_f, 'w').write('overwritten by a classmate')
    except OSError:
        pass
for _target in [_paths['canary'], _paths['submissions'] + '/planted.ipynb', _paths['out'] + '/planted.txt']:
    try:
        open(_target, 'w').write('planted')
    except OSError:
        pass
for _f in glob.glob(_paths['cache'] + '/*') + glob.glob(_paths['out'] + '/**/*', recursive=True):
    try:
        os.remove(_f)
    except OSError:
        pass
for _home in [os.path.expanduser('~'), '/tmp', '/root', '/work']:
    try:
        open(os.path.join(_home, 'planted-by-a-student'), 'w').write('x')
    except OSError:
        pass
""",
        "overwrite_autograder": f"""
import glob, json
_paths = {p}
for _f in glob.glob(_paths['cache'] + '/*.json') + glob.glob(_paths['out'] + '/**/*.zip', recursive=True) \\
        + glob.glob('/tmp/**/*.zip', recursive=True):
    try:
        open(_f, 'w').write(json.dumps({{'forged': True}}))
    except OSError:
        pass
""",
        "kill_grader": """
import os, signal
for _pid in os.listdir('/proc'):
    if _pid.isdigit() and int(_pid) != os.getpid():
        try:
            os.kill(int(_pid), signal.SIGKILL)
        except OSError:
            pass
try:
    os.kill(os.getppid(), signal.SIGKILL)
except OSError:
    pass
""",
        "fork_survivors": f"""
import os, subprocess, sys
subprocess.Popen(['setsid', 'sleep', '600', '{MARKER}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.Popen(['nohup', 'sleep', '601', '{MARKER}'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(602)', '{MARKER}'], start_new_session=True)
for _i in range(600):
    try:
        _pid = os.fork()
    except OSError:
        break
    if _pid == 0:
        try:
            os.setsid()
            os.execv('/bin/sleep', ['sleep', '603', '{MARKER}'])
        finally:
            os._exit(0)
""",
        "memory_hog": """
_hog = []
try:
    while True:
        _hog.append(bytearray(256 << 20))
except MemoryError:
    pass
_big = open('big.bin', 'wb')
try:
    _big.write(bytes(1 << 30))
except OSError:
    pass
""",
        "flood_output": """
import os
for _fd in range(3, 12):
    try:
        os.write(_fd, b'{"event": "cells", "errors": []}\\n' * 10 + b'x' * (40 << 20))
    except OSError:
        pass
print('x' * (50 << 20))
""",
        "network": """
import socket, urllib.request
try:
    urllib.request.urlopen('https://pypi.org/simple/', timeout=3).read(100)
    q10_implied_by = 'network reachable'
except Exception as exc:
    q10_implied_by = 'no network'
""",
    }


def honest(stem: str = "ch01_exercises") -> dict[str, nbformat.NotebookNode]:
    """Honest work that must score what it deserves (full marks, or all but one slow hidden case)."""
    good = solved(stem)
    out = {}
    numpy = _with_cell(good, """
import numpy as _np
def _np_value(v):
    if isinstance(v, bool):
        return _np.bool_(v)
    if isinstance(v, int):
        return _np.int64(v)
    if isinstance(v, float):
        return _np.float64(v)
    if isinstance(v, tuple):
        return tuple(_np_value(x) for x in v)
    return v
def _np_wrap(f):
    def wrapped(*a, **k):
        return _np_value(f(*a, **k))
    wrapped.__name__ = f.__name__
    return wrapped
import types as _types
for _n, _v in list(globals().items()):
    if _n.startswith('_') or _n in ('In', 'Out', 'get_ipython', 'exit', 'quit'):
        continue
    if isinstance(_v, _types.FunctionType) and _v.__module__ == '__main__':
        globals()[_n] = _np_wrap(_v)
    elif type(_v) in (bool, int, float, tuple) and _n.startswith('q'):
        globals()[_n] = _np_value(_v)
""")
    out["honest_numpy_types.ipynb"] = numpy
    venv = copy.deepcopy(good)
    venv.metadata["kernelspec"] = {"name": "my-course-venv", "display_name": "Python (my-course-venv)",
                                   "language": "python"}
    out["honest_venv_kernel.ipynb"] = venv
    later = _student(stem)
    later.cells.append(nbformat.v4.new_code_cell(
        "\n\n".join(c.source for c in good.cells if c.cell_type == "code" and not exercises._is_plumbing(c))))
    out["honest_answers_later.ipynb"] = later
    out["honest_slow_hidden_case.ipynb"] = _with_cell(good, """
import time
_step_ms = step_ms
def step_ms(compute_ms, slowest_ms, stages, microbatches, comm_ms, fabric_slowdown=1.0):
    if microbatches == 1:  # one input the prompt does not show: a slow path
        time.sleep(3600)
    return _step_ms(compute_ms, slowest_ms, stages, microbatches, comm_ms, fabric_slowdown)
""")
    return out


# What the grader must make of each file: (allowed statuses, "zero" | "full" | "slow").
GRADED = ("graded", "graded-with-errors")
MANIFEST: dict[str, tuple[tuple[str, ...], str]] = {
    **{f"cheat_{name}.ipynb": (GRADED, "zero") for name in (
        "patch_otter", "patch_feedback", "patch_pickle", "float_subclass",
        "read_solutions", "read_tests", "detached_rewriter", "overwrite_others", "overwrite_autograder",
        "memory_hog", "network", "fork_survivors")},
    # inside its PID namespace it may take the sandbox down with it, never the grader
    "cheat_kill_grader.ipynb": (GRADED + ("crashed",), "zero"),
    "cheat_flood_output.ipynb": (GRADED + ("output-too-large",), "zero"),
    "cheat_patch_builtins.ipynb": (GRADED + ("crashed",), "zero"),
    "honest_numpy_types.ipynb": (("graded",), "full"),
    "honest_venv_kernel.ipynb": (("graded",), "full"),
    "honest_answers_later.ipynb": (("graded",), "full"),
    "honest_slow_hidden_case.ipynb": (("graded",), "slow"),
    "zeros_200MB.ipynb": (("too-large",), "zero"),
    "passwd.ipynb": (("not-a-regular-file",), "zero"),
    "=HYPERLINK(\"evil\")&1.ipynb": (("graded",), "zero"),
    ".hidden_copy.ipynb": (("graded",), "full"),
    "alice/ch01.ipynb": (("graded",), "full"),
    "alice/ch01 (1).ipynb": (("graded",), "zero"),
    "bob/ch02.ipynb": (("graded",), "full"),
    "carol/ch03.ipynb": (("graded",), "full"),
    "notes.txt": (("not-a-notebook",), "zero"),
}


def build(folder: pathlib.Path, paths: dict[str, str]) -> dict[str, tuple[tuple[str, ...], str]]:
    """Write every submission of ``MANIFEST`` into ``folder``; return the manifest."""
    folder.mkdir(parents=True, exist_ok=True)
    blank = _student()
    for name, code in cheats(paths).items():
        nbformat.write(_with_cell(blank, code, first=name in ("patch_otter", "patch_feedback")),
                       folder / f"cheat_{name}.ipynb")
    for name, nb in honest().items():
        nbformat.write(nb, folder / name)
    with open(folder / "zeros_200MB.ipynb", "wb") as handle:
        handle.truncate(200 << 20)  # sparse: 200 MB of NUL bytes that take no disk
    os.symlink("/etc/passwd", folder / "passwd.ipynb")
    nbformat.write(blank, folder / "=HYPERLINK(\"evil\")&1.ipynb")
    nbformat.write(solved(), folder / ".hidden_copy.ipynb")
    (folder / "alice").mkdir(exist_ok=True)
    nbformat.write(solved(), folder / "alice" / "ch01.ipynb")
    nbformat.write(blank, folder / "alice" / "ch01 (1).ipynb")
    (folder / "bob").mkdir(exist_ok=True)
    nbformat.write(solved("ch02_exercises"), folder / "bob" / "ch02.ipynb")
    (folder / "carol").mkdir(exist_ok=True)
    nbformat.write(solved("ch03_exercises"), folder / "carol" / "ch03.ipynb")
    (folder / "notes.txt").write_text("=1+2\n")
    return dict(MANIFEST)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=pathlib.Path)
    parser.add_argument("--canary", type=pathlib.Path, required=True, help="a file no submission may change")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("grading-output"))
    parser.add_argument("--cache", type=pathlib.Path, default=pathlib.Path.home() / ".cache")
    args = parser.parse_args(argv)
    paths = {"repo": str(exercises.ROOT), "submissions": str(args.folder.resolve()),
             "out": str(args.out.resolve()), "cache": str(args.cache.resolve()), "canary": str(args.canary.resolve())}
    for name in build(args.folder, paths):
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
