# The README's two commands: `make demo` and `make test`.  One editable .venv serves both
# (PITFALLS: the source folder shadows a non-editable install).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
BUILD_DEPS := "setuptools>=70" wheel "Cython>=3.0" "numpy>=1.26" "pluggy>=1.3" "scipy>=1.11" "threadpoolctl>=3.1"
# plugins/reference: the reference device (plain C kernels over a host arena the host cannot
# read directly), the template a vendor copies and the second device the tests run on
PLUGINS := plugins/cpu plugins/mps plugins/xpu plugins/reference
# ember-cuda depends on pycuda, which installs only where the CUDA toolkit and a driver are:
# here it goes in without its dependencies, registers "cuda" and reports it unavailable
NODEPS_PLUGINS := plugins/cuda
# what the examples use beyond ember itself (the demo's dataset and progress bar)
DEMO_DEPS := "scikit-learn>=1.3" "tqdm>=4.60"

.PHONY: demo test build lint wheel-smoke bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# install once (entry points need an install); later runs only rebuild changed .pyx in place
$(VENV)/.installed: $(BIN)/python pyproject.toml $(addsuffix /pyproject.toml,$(PLUGINS) $(NODEPS_PLUGINS))
	$(PIP) install -q $(BUILD_DEPS)
	$(PIP) install -q --no-build-isolation -e . $(addprefix -e ,$(PLUGINS))
	$(PIP) install -q --no-build-isolation --no-deps $(addprefix -e ,$(NODEPS_PLUGINS))
	touch $@

build: $(VENV)/.installed
	$(BIN)/python setup.py -q build_ext --inplace
	cd plugins/cpu && ../../$(BIN)/python setup.py -q build_ext --inplace
	cd plugins/cuda && ../../$(BIN)/python setup.py -q build_ext --inplace
	cd plugins/reference && ../../$(BIN)/python setup.py -q build_ext --inplace

$(VENV)/.demo-deps: $(VENV)/.installed
	$(PIP) install -q $(DEMO_DEPS)
	touch $@

demo: build $(VENV)/.demo-deps
	$(BIN)/python examples/demo.py

# ember.distributed runs on MPI: mpi4py and MPICH from wheels (mpiexec included, no system MPI)
DIST_DEPS := "mpi4py>=4.0" "mpich>=4.2"

$(VENV)/.test-deps: $(VENV)/.installed
	$(PIP) install -q "pytest>=8" "ruff>=0.5" "build>=1.0" "safetensors>=0.4" "hypothesis>=6" $(DEMO_DEPS) "tensorboard>=2.14"
	$(PIP) install -q $(DIST_DEPS)
	$(PIP) install -q torch==2.13.0
	touch $@

# the core's device-parametrised op tests run on the cpu, on the reference device, and on
# "memcore" (the CPU's memory entries only: every primitive through the host fallback)
test: build $(VENV)/.test-deps lint
	EMBER_TEST_DEVICES=cpu,reference,memcore $(BIN)/python -m pytest
	# the conformance suite ember ships, as a vendor runs it
	$(BIN)/python -m pytest --pyargs ember.testing.conformance --ember-device=cpu -q
	$(BIN)/python -m pytest --pyargs ember.testing.conformance --ember-device=reference -q
	# again with data errors reported at the next synchronisation, as a GPU reports them
	EMBER_REFERENCE_DEFER_ERRORS=1 $(BIN)/python -m pytest --pyargs \
	    ember.testing.conformance --ember-device=reference -q
	$(MAKE) wheel-smoke

lint: $(VENV)/.test-deps
	$(BIN)/ruff check .

# Build the wheels, install them in a scratch venv, and run an op from outside the repo:
# an editable install hides subpackages missing from `packages`; a wheel does not.
wheel-smoke: $(VENV)/.test-deps
	rm -rf build/wheels build/smoke-venv
	$(PIP) wheel -q --no-build-isolation --no-deps -w build/wheels . plugins/cpu plugins/cuda \
		plugins/reference
	$(PYTHON) -m venv build/smoke-venv
	build/smoke-venv/bin/python -m pip install -q build/wheels/ember-*.whl build/wheels/ember_cpu-*.whl \
		build/wheels/ember_reference-*.whl
	build/smoke-venv/bin/python -m pip install -q --no-deps build/wheels/ember_cuda-*.whl
	cd build && smoke-venv/bin/python -c "import ember, sys; \
		assert 'site-packages' in ember.__file__, ember.__file__; \
		x = ember.arange(6, dtype=ember.float32).view(2, 3); y = (x @ x.t() + 1).sum(); \
		assert y.item() == 87.0, y; assert not ember.cuda.is_available(); \
		import ember_cuda._modules as m; assert 'ew.float32' in m.all_modules() and m.render('ew.float32'); \
		r = ember.arange(6, dtype=ember.float32, device='reference').view(2, 3); \
		assert ((r @ r.t() + 1).sum().item(), str(r.device)) == (87.0, 'reference:0'); \
		print('wheel smoke test ok:', ember.__file__)"
	rm -rf build/ember-smoke && cd build && smoke-venv/bin/python -m ember.backends new smoke --dir . \
		>/dev/null && test -f ember-smoke/ember_smoke/kernels.c && echo "wheel smoke test ok: plugin skeleton"

bench: build $(VENV)/.test-deps
	$(BIN)/python benchmarks/bench_foundation.py

clean:
	rm -rf build dist $(VENV) *.egg-info core/*.c core/*.so plugins/*/*.egg-info \
		plugins/cpu/ember_cpu/*.c plugins/cpu/ember_cpu/*.so plugins/cuda/ember_cuda/*.c \
		plugins/cuda/ember_cuda/*.so plugins/reference/ember_reference/*.so plugins/reference/build
