# AI Training Clusters: build, test and maintain the executable book.
#   make book     build the HTML book into _build/html (executes every notebook)
#   make test     unit tests, strict nbval on every notebook, and a warning-free book build
#   make refresh  re-execute every committed notebook in place, top to bottom, in a fresh kernel
#   make mutants  mutation testing of the model modules (mutmut; slow, not part of make test)
#   make lab      open the chapters and exercises in JupyterLab (a separate environment, .venv-lab)
# Only Python 3.11 and make are needed; everything else is installed into .venv.

PYTHON ?= python3
VENV   := .venv
BIN    := $(CURDIR)/$(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PATH := $(BIN):$(PATH)
export PYTHONHASHSEED := 0

.PHONY: book test unit nbval build-check refresh lab bench mutants clean help

help:
	@sed -n '2,8p' Makefile

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --all
	@echo ""
	@echo "The book is at: file://$(CURDIR)/_build/html/index.html"

test: $(STAMP) unit nbval build-check exercises-check

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests --ignore=tests/built_html

nbval: $(STAMP)
	$(BIN)/python -m pytest -q --nbval notebooks --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider

build-check: $(STAMP)
	rm -rf _build
	$(BIN)/jupyter-book build . --all -W --keep-going
	$(BIN)/python -m pytest -q tests/built_html

refresh: $(STAMP)
	$(BIN)/python tools/refresh.py notebooks/*.ipynb

bench: $(STAMP)
	$(BIN)/python tools/bench_widgets.py

# Mutation testing: every top-level model module and compositions/, each against the tests that
# cover it, in a scratch copy under _build/mutants (see tools/mutants/REPORT.md). CPU-heavy:
# `make mutants MODULES="scaling placement"` runs some modules only; JOBS sets mutmut's workers.
MODULES ?=
mutants: $(STAMP)
	nice $(BIN)/python tools/mutants/run.py --jobs $(JOBS) $(MODULES)

LAB_STAMP := .venv-lab/.installed-stamp
$(LAB_STAMP): requirements.txt pyproject.toml
	@test -x .venv-lab/bin/python || $(PYTHON) -m venv .venv-lab
	.venv-lab/bin/python -m pip install --quiet --upgrade pip
	.venv-lab/bin/python -m pip install --quiet -r requirements.txt jupyterlab
	@touch $(LAB_STAMP)

# JupyterLab refuses to run as root unless told to (containers, CI machines).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

lab: $(LAB_STAMP)
	.venv-lab/bin/jupyter lab $(ALLOW_ROOT) --notebook-dir=$(CURDIR) --LabApp.default_url=/lab/tree/notebooks

# Exercises: masters with solutions and hidden tests in solutions/, student
# copies (public tests only) generated into exercises/, graded by otter-grader.
#   make exercises                    regenerate exercises/ from solutions/ (commit the result)
#   make exercises-check              CI: exercises/ up to date, solutions full marks, blank copies
#                                     zero, planted mistakes named, the bulk grader robust
#   make grade SUBMISSIONS=<folder>   grade every file in <folder>: $(GRADE_OUT)/grades.csv + feedback/
.PHONY: exercises exercises-check grade
SUBMISSIONS ?=
GRADE_OUT   ?= grading-output
TIMEOUT     ?= 300
JOBS        ?= 2

exercises: $(STAMP)
	$(BIN)/python tools/exercises.py build

exercises-check: $(STAMP)
	$(BIN)/python tools/exercises.py check
	EXERCISE_GRADING_TESTS=1 $(BIN)/python -m pytest -q tests/test_exercises_grading.py -p no:cacheprovider

grade: $(STAMP)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder> [GRADE_OUT=grading-output] [TIMEOUT=300] [JOBS=2]"; exit 2; }
	$(BIN)/python tools/grade.py "$(SUBMISSIONS)" --out "$(GRADE_OUT)" --timeout $(TIMEOUT) --jobs $(JOBS)

clean:
	rm -rf _build
