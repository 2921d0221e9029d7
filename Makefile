# bgsim: the two commands are `make demo` and `make test`. Each installs what is missing.

SWIFT    ?= swift
PREFIX   ?= /usr/local
SCENARIO ?= models/scenarios/default.yaml
DEMO_OUT ?= notebooks-data/$(basename $(notdir $(SCENARIO)))
# apt-get needs root; use sudo when not root and sudo exists.
SUDO     := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
# The release binary links the Swift runtime and Foundation statically: each run starts about
# 12 ms sooner (no dynamic symbol resolution of Foundation's and ICU's libraries; a one-hour
# run went from 46 to 34 ms, median of 20), and the binary runs where Swift is not installed
# (a Slurm node needs only libgsl, libstdc++ and libc).
RELEASE  := $(SWIFT) build -c release --static-swift-stdlib --product bgsim

.PHONY: demo test test-builds test-fast lint format docs install deps deps-slurm deps-chromium deps-valgrind deps-notebooks notebooks python test-python policy-package policy-api-docs fingerprints planted-bugs install-files validation battery build bench reference instructions scaling equivalence sweep-bench report-bench fuzz fuzz-input memory datasets clean

## Install what is missing, build in release, run the default scenario and write its report.
demo: deps
	$(RELEASE)
	.build/release/bgsim run $(SCENARIO) --out $(DEMO_OUT)
	.build/release/bgsim report $(DEMO_OUT) --format md --quiet
	@echo "Report: $(DEMO_OUT)/report.html (and report.md)"

## The bundled studies' datasets in notebooks-data/ (schema in notebooks-data/README.md), each
## with its report: the default comparison, the fleet of 1,000 people, the Background App
## Refresh setting sweep and the charging-habit sweep.
datasets: deps
	$(RELEASE)
	.build/release/bgsim run models/scenarios/default.yaml --out notebooks-data/default --quiet
	.build/release/bgsim report notebooks-data/default --format md
	.build/release/bgsim run models/scenarios/fleet.yaml --out notebooks-data/fleet --no-tasks --quiet
	.build/release/bgsim report notebooks-data/fleet --format md
	.build/release/bgsim sweep models/sweeps/refresh-setting.yaml --out notebooks-data/refresh-setting --no-tasks --quiet
	.build/release/bgsim report notebooks-data/refresh-setting --format md
	.build/release/bgsim sweep models/sweeps/charging-habit.yaml --out notebooks-data/charging-habit --no-tasks --quiet
	.build/release/bgsim report notebooks-data/charging-habit --format md

## Install what is missing and run the tests (about 11 minutes on 2 cores): lint, the release
## and debug builds, the test suite (its command-line and study tests run the release binary,
## so the debug build's assertions check what the libraries do in the suite while the binary's
## runs take seconds), then on the release binary the Slurm test (a one-node cluster on
## loopback runs a sweep's shards and merge, checked byte for byte against a local run), the
## report test (chromium renders the reports), the install test (an installed bgsim runs its
## bundled examples by name from an empty folder), the validation page's rows, every one of
## which must be in its band, the Python reader's tests and the notebook; and the input fuzzer
## on the debug binary, whose assertions stop at the first inconsistency. The checks that build
## bgsim again in another form, the DocC documentation and the short scaling check are
## `make test-builds`; CI (.ci/run) runs both.
test: deps deps-slurm deps-chromium lint
	$(RELEASE)
	$(SWIFT) build --build-tests --explicit-target-dependency-import-check error
	BGSIM_BINARY=$(CURDIR)/.build/release/bgsim $(SWIFT) test --skip-build
	Tests/Slurm/slurm-sweep-test.sh .build/release/bgsim
	Tests/Report/report-browser-test.sh .build/release/bgsim
	Tests/Install/install-test.sh .build/release/bgsim
	python3 Tests/Fuzz/fuzz-input.py .build/debug/bgsim --cases 200 --seed 1
	python3 docs/validation.py .build/release/bgsim --check
	$(MAKE) test-python
	$(MAKE) notebooks

## What builds bgsim again in another form, and the two slower checks that need no test build
## (about 14 minutes on 2 cores; CI runs it after `make test`): the event-costs test (the
## timing build still compiles and simulates exactly what the normal debug build does), the
## policy package test (the template of a user's own policies, built outside the repository
## and run), the add-policy and add-mechanism tests (a built-in policy, then a mechanism, added
## to one copy of the tree with one build: the files each touches, the tests that fail when a
## step is forgotten), the benchmarks package, which builds against the entry points the
## library products keep public, the DocC documentation, and the short variant of
## `make scaling` (instruction counts: cost per task and per simulated day may not grow faster
## than the work).
test-builds: deps deps-valgrind docs
	$(SWIFT) build --product bgsim
	SWIFT=$(SWIFT) Tests/EventCosts/event-costs-test.sh .build/debug/bgsim
	SWIFT=$(SWIFT) Tests/PolicyPackage/policy-package-test.sh
	SWIFT=$(SWIFT) Tests/AddPolicy/add-policy-test.sh
	SWIFT=$(SWIFT) Tests/AddMechanism/add-mechanism-test.sh
	cd Benchmarks && $(SWIFT) build -c release
	$(RELEASE)
	python3 Benchmarks/scaling.py .build/release/bgsim --quick --check

## The unit and scenario-file tests alone, for the inner loop: the engine, random streams, the
## world model, the scheduling rules and policies, scenario files and the documents; not the
## command line, whole studies, sweeps, reports or random sweeps (`make test` runs everything).
FAST_SUITES := SimEngineTests SimRandomTests PhoneWorldTests SchedulingTests \
               ExperimentsTests.ScenarioTests ExperimentsTests.ProfileTests ExperimentsTests.ProfileSearchTests \
               ExperimentsTests.DocumentationTests ExperimentsTests.TraceTests ExperimentsTests.CoresTests \
               ExperimentsTests.QuotingTests
test-fast: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build $(foreach s,$(FAST_SUITES),--filter '^$(s)')

## Formatting: swift-format (shipped with the toolchain) with .swift-format; `make format`
## rewrites the files, `make lint` fails on any difference or lint finding.
FORMATTED := Package.swift Sources Tests Examples Benchmarks/Package.swift Benchmarks/Benchmarks
lint:
	$(SWIFT) format lint --strict --recursive --parallel $(FORMATTED)

format:
	$(SWIFT) format --in-place --recursive --parallel $(FORMATTED)

## The DocC documentation of the library targets, in .build/docs/<Target>.doccarchive (open one
## with `docc preview`, or serve it); warnings, such as a link to a symbol that does not exist
## or an undocumented parameter, are errors. `make test-builds` runs it.
LIBRARIES := SimEngine SimRandom PhoneWorld PolicyAPI ResultFiles Experiments BGSimCommandLine
docs:
	$(SWIFT) package --disable-sandbox generate-documentation --warnings-as-errors \
	  $(foreach t,$(LIBRARIES),--target $(t)) --output-path .build/docs

## The release binary to $(PREFIX)/bin and the bundled profiles to $(PREFIX)/share/bgsim/models,
## where an installed bgsim finds them for scenarios outside models/.
install: build install-files

## The same layout with any binary (INSTALL_BIN): the install test puts the debug build there.
INSTALL_BIN ?= .build/release/bgsim
## PREFIX, DESTDIR and INSTALL_BIN reach the shell as environment variables, as given (make's
## `value`, so a `$` in them is part of the path, not make's), and are quoted there: a space, a
## quote, a backtick or `$(...)` is a character of the path, never a word break or a command.
## An empty PREFIX and control characters are refused before anything is written.
install-files: export BGSIM_PREFIX := $(value PREFIX)
install-files: export BGSIM_DESTDIR := $(value DESTDIR)
install-files: export BGSIM_BIN := $(value INSTALL_BIN)
install-files:
	@case "$$BGSIM_DESTDIR$$BGSIM_PREFIX$$BGSIM_BIN" in *[[:cntrl:]]*) \
	  echo "error: PREFIX, DESTDIR and INSTALL_BIN may not hold control characters" >&2; exit 2;; esac; \
	[ -n "$$BGSIM_PREFIX" ] || { echo "error: PREFIX is empty; give the folder to install under, such as PREFIX=/usr/local" >&2; exit 2; }; \
	root="$$BGSIM_DESTDIR$$BGSIM_PREFIX"; \
	install -d -- "$$root/bin" "$$root/share/bgsim" && \
	install -m 755 -- "$$BGSIM_BIN" "$$root/bin/bgsim" && \
	rm -rf -- "$$root/share/bgsim/models" "$$root/share/bgsim/docs" && \
	cp -R -- models "$$root/share/bgsim/models" && \
	cp -R -- docs "$$root/share/bgsim/docs" && \
	echo "Installed $$root/bin/bgsim (profiles in $$root/share/bgsim/models, documents in .../docs)"

## A copy of the template package of your own policies (Examples/PolicyPackage) in DEST, without
## what building it in place left there (its .build is about 100 MB): `make policy-package
## DEST=~/my-policies`. docs/policies.md goes on from there.
## Rewrites docs/policies.md's "The policy API" from the declarations (its test checks it).
policy-api-docs: deps
	$(SWIFT) build --build-tests
	BGSIM_WRITE_POLICY_API=1 $(SWIFT) test --skip-build --filter PolicyAPIDocumentationTests

## Plant each deliberate one-line bug of Tests/PlantedBugs/bugs.tsv in a copy of the tree and
## print what caught it (about 25 s a bug outside Scheduling, longer inside; not in `make test`).
planted-bugs: deps
	python3 Tests/PlantedBugs/plant.py

## Record the fingerprint world's runs (Tests/Fingerprint) after a change meant to move them.
fingerprints: deps
	$(SWIFT) build --build-tests
	BGSIM_WRITE_FINGERPRINTS=1 $(SWIFT) test --skip-build --filter FingerprintTests

policy-package:
	@test -n "$(DEST)" || { echo "error: say where: make policy-package DEST=~/my-policies" >&2; exit 2; }
	@test ! -e "$(DEST)" || { echo "error: $(DEST) exists; choose a new folder" >&2; exit 2; }
	mkdir -p "$(DEST)"
	tar -C Examples/PolicyPackage --exclude=./.build --exclude=./.swiftpm --exclude=./results --exclude=./out -cf - . | tar -C "$(DEST)" -xf -
	@echo "The template is in $(DEST): cd there, export BGSIM_PATH=$(CURDIR), swift build (docs/policies.md)"

## Swift must already be installed; GSL and pkg-config come from Debian's packages, and
## python3 (the tests read the result files back with its csv module) too.
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: '$(SWIFT)' not found: install Swift 6.1 or later (swift.org)" >&2; exit 1; }
	@if ! pkg-config --exists gsl 2>/dev/null || ! command -v python3 >/dev/null; then \
	  echo "Installing libgsl-dev, pkg-config and python3 with apt-get..."; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgsl-dev pkg-config python3 >/dev/null && \
	  pkg-config --exists gsl && command -v python3 >/dev/null || { echo "error: installing libgsl-dev or python3 failed" >&2; exit 1; }; \
	fi

# $(call apt-install,COMMANDS,PACKAGES): installs Debian's PACKAGES with apt-get unless every
# one of COMMANDS is on the PATH already, and checks that they are afterwards.
has-all = $(foreach c,$(1),command -v $(c) >/dev/null &&) true
define apt-install
	@if ! { $(call has-all,$(1)); }; then \
	  echo "Installing $(2) with apt-get..."; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null && \
	  { $(call has-all,$(1)); } || { echo "error: installing $(2) failed" >&2; exit 1; }; \
	fi
endef

## The Slurm test's daemons and clients, from Debian's packages (no daemon is started by them).
deps-slurm:
	$(call apt-install,slurmctld slurmd sbatch munged,slurmctld slurmd slurm-client munge)

## A real browser for the report test (Debian's chromium, run headless).
deps-chromium:
	$(call apt-install,chromium,chromium)

## The analysis notebook, notebooks-data/study.ipynb, executed headless with the Python reader
## on the bundled datasets (or on any results folder: BGSIM_RESULTS=folder, and BGSIM_FLEET for
## a fleet's): the executed copy and its figures go to results/notebooks/. `make test` runs it;
## a cell that raises fails it.
notebooks: python
	BGSIM_FIGURES=$(CURDIR)/results/notebooks PYDEVD_DISABLE_FILE_VALIDATION=1 $(PYTHON_ENV)/bin/python -Xfrozen_modules=off -m nbconvert --to notebook --execute notebooks-data/study.ipynb \
	  --output-dir results/notebooks --ExecutePreprocessor.timeout=600
	@echo "Notebook: results/notebooks/study.ipynb; figures: results/notebooks/*.png"

## The Python reader (python/, `import bgsim`), installed by pip into a virtual environment in
## $(PYTHON_ENV) that uses Debian's pandas and matplotlib; `$(PYTHON_ENV)/bin/python` then has it.
## Elsewhere: `pip install ./python` (pandas and matplotlib from PyPI).
PYTHON_ENV := .build/python
SALIB_VERSION := 1.5.1
python: deps-notebooks
	@test -x $(PYTHON_ENV)/bin/python || /usr/bin/python3 -m venv --system-site-packages $(PYTHON_ENV)
	$(PYTHON_ENV)/bin/python -m pip install --quiet --no-build-isolation --no-deps --no-index ./python
	@# SALib checks bgsim's sensitivity estimators (python/tests/test_sensitivity.py); its
	@# other dependencies are Debian's (deps-notebooks).
	@$(PYTHON_ENV)/bin/python -c 'import SALib.analyze.sobol' 2>/dev/null || $(PYTHON_ENV)/bin/python -m pip install --quiet --no-deps 'SALib==$(SALIB_VERSION)'
	@rm -rf python/build python/*.egg-info
	@# The notebook's kernel is this environment's Python, which has the reader.
	@$(PYTHON_ENV)/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	@echo "The reader: $(PYTHON_ENV)/bin/python -c 'import bgsim; print(bgsim.load(\"notebooks-data/default\"))'"

## The reader's tests (pytest), on a run, a fleet and a sweep that the release build writes in
## a temporary folder outside the repository.
test-python: python
	$(RELEASE)
	cd "$$(mktemp -d)" && BGSIM_BINARY=$(CURDIR)/.build/release/bgsim $(CURDIR)/$(PYTHON_ENV)/bin/python -m pytest -q -p no:cacheprovider $(CURDIR)/python/tests

NOTEBOOK_MODULES := import pandas, matplotlib, nbconvert, nbclient, ipykernel, pytest, scipy, multiprocess
# Debian's python3 makes a virtual environment only with python3-venv's pip wheel.
HAS_VENV := ls /usr/share/python-wheels/pip-*.whl >/dev/null 2>&1
deps-notebooks:
	@if ! /usr/bin/python3 -c '$(NOTEBOOK_MODULES)' 2>/dev/null || ! $(HAS_VENV); then \
	  echo "Installing Python's pandas, matplotlib, nbconvert, ipykernel, pytest, scipy, multiprocess and venv with apt-get..."; \
	  $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pandas python3-matplotlib \
	    python3-nbconvert python3-nbclient python3-ipykernel python3-pytest python3-venv python3-pip \
	    python3-scipy python3-multiprocess >/dev/null && \
	  /usr/bin/python3 -c '$(NOTEBOOK_MODULES)' && $(HAS_VENV) || { echo "error: installing the notebook's packages failed" >&2; exit 1; }; \
	fi

## docs/validation.md: every observation of how iPhones schedule background work, every rule
## public sources give and every AOSP behaviour `android` follows, with the band each implies,
## bgsim's measured value and pass or fail (docs/validation.py); fails if a row is out of band.
validation: deps
	$(RELEASE)
	python3 docs/validation.py .build/release/bgsim

## docs/battery.md: discharge tests of the battery models under a bench load, beside published
## figures (docs/battery.py, models/sweeps/discharge.yaml).
battery: deps
	$(RELEASE)
	python3 docs/battery.py .build/release/bgsim

## Valgrind, for `make instructions` (Debian's package).
deps-valgrind:
	$(call apt-install,valgrind,valgrind)

build: deps
	$(RELEASE)

## Benchmarks (own package, not built by `make test`): hold model and whole scenarios.
bench: deps
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark

## The reference benchmark: phone-days per second per core on models/scenarios/reference.yaml
## for each policy, and the speed-up of --jobs 2 over --jobs 1 with the machine's ceiling (two
## --jobs 1 processes side by side). BASE=path/to/older/bgsim times
## that binary too, runs interleaved, for a before/after table whose speed-up is the median of
## the pairs' ratios; RUNS=n medians of n runs.
reference: deps
	$(RELEASE)
	Benchmarks/reference.sh

## Instructions, not seconds: callgrind's count for one 30-day reference run per policy and for
## the same run cut to one minute (what is not the simulation). Counts repeat exactly, so they
## carry before/after claims of a few per cent (BASE=path/to/an/older/bgsim adds the change);
## time is `make reference`'s.
instructions: deps deps-valgrind
	$(RELEASE)
	Benchmarks/instructions.sh

## How cost grows with the work (issue 54): callgrind's instructions per task for 20, 100, 200
## and 500 apps, and per simulated day over 30 days, 1 year and 10 years, with peak memory and
## the two ratios (about 7 minutes here; QUICK=1: 20 and 100 apps, 30 days against 1 year).
scaling: deps deps-valgrind
	$(RELEASE)
	python3 Benchmarks/scaling.py .build/release/bgsim $(if $(QUICK),--quick)

## Old against new: the default scenario's 30 replications under BASE=path/to/an/older/bgsim and
## this build, paired by replication; each policy's and terminal-table metric's difference with
## its 95% interval, and exit 1 if an interval excludes 0. For changes that should not alter
## what the model means (docs/performance.md).
equivalence: deps
	$(RELEASE)
	Benchmarks/equivalence.sh

## Random sweeps under a debug build, whose assertions stop at the first inconsistency:
## Tests/Fuzz/$(SWEEP).yaml (wide: the world and settings, the default; apps: what the apps do;
## battery: the battery, charger and loads at their edges; ios: the ios model's parameters)
## from design seed SEED (1), POINTS points (300). A failure names the unit and its point's values.
fuzz: deps
	$(SWIFT) build --product bgsim
	Tests/Fuzz/fuzz.sh

## Peak memory of a summary-only run of the default scenario over 30 days, 1 year and 10
## years (Benchmarks/memory.py).
memory: deps
	$(RELEASE)
	python3 Benchmarks/memory.py .build/release/bgsim

## The input fuzzer: CASES (10000) mutations of valid scenarios, sweeps, --set values and
## traces from SEED (1), on the release build; bgsim must exit 0 or 2, in one line on error,
## within 30 s and 1 GB, writing only into --out. Failing cases are kept under fuzz-failures/.
## `make test` runs 200 of them on the debug build.
fuzz-input: deps
	$(RELEASE)
	python3 Tests/Fuzz/fuzz-input.py .build/release/bgsim --cases $(or $(CASES),10000) --seed $(or $(SEED),1)

## The many-points benchmark: a 2,000-point sweep of one-hour runs, --jobs 1 and 2 (what a
## sweep costs per point besides the simulation). BASE= and RUNS= as for `reference`.
sweep-bench: deps
	$(RELEASE)
	Benchmarks/sweep-points.sh

## The report benchmark: a 10,000-row sweep's report must open and draw in under 2 s.
report-bench: deps deps-chromium
	$(RELEASE)
	Benchmarks/report-speed.sh

clean:
	rm -rf .build Benchmarks/.build
