# The user's interface to strata. `make run` and `make test` work on a fresh Debian 12 machine
# that has git, make, g++ and cmake: `make deps` installs the rest from Debian's packages.

SHELL := /bin/bash
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
FUZZ_SECONDS ?= 20

# Everything the build, the tests and the benchmarks need, as Debian 12 package names.
DEB_PACKAGES := g++ cmake ninja-build ccache pkg-config clang-format clang libclang-rt-14-dev \
  libboost1.81-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev \
  libxxhash-dev libexpected-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev \
  python3 python3-kubernetes procps findutils nginx wrk valgrind prometheus chromium \
  openssl libssl-dev curl unzip jq python3-yaml python3-venv
# Node.js and npm run the gateway's tests with the official openai client: Debian's packages,
# unless this machine already has a node and an npm (from any source).
DEB_PACKAGES += $(shell command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || echo nodejs npm)

# The official openai Python client for the gateway's tests (tests/gateway/python), which Debian
# does not package: a virtual environment outside the repo, from the pinned requirements.
PY_DEPS_DIR ?= $(HOME)/.cache/strata-python
PY_REQUIREMENTS := tests/gateway/python/requirements.txt
# Ray, for the live RayJob of tests/platform/compat_manifests_e2e_test.cc (KubeRay's manifests
# started with real `ray start`), installed the same way.
RAY_DEPS_DIR ?= $(HOME)/.cache/strata-ray
RAY_REQUIREMENTS := tests/platform/ray/requirements.txt

# PyTorch for the DDP job in examples/torch-ddp and its test (tests/platform/torch_ddp_e2e_test):
# torch and only the CUDA libraries its wheel cannot be imported without, with --no-deps (the
# requirements file says why). About 4 GB; under a minute where PyPI is near.
TORCH_DEPS_DIR ?= $(HOME)/.cache/strata-torch
TORCH_REQUIREMENTS := examples/torch-ddp/requirements.txt

FORMAT_FILES = $(shell git ls-files --cached --others --exclude-standard \
  'src/*.h' 'src/*.cc' 'tests/*.h' 'tests/*.cc' 'bench/*.h' 'bench/*.cc' 'fuzz/*.cc' 2>/dev/null)

.PHONY: all deps deb-deps kube-deps py-deps torch-deps build build-asan build-fuzz test test-release test-asan fuzz \
  format format-check check-includes run clean

all: build

deps: deb-deps kube-deps py-deps torch-deps

deb-deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	  done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "strata needs these Debian packages: $$missing"; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "Run as root: apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing"; \
	  exit 1; \
	fi; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $$missing

# A real Kubernetes control plane for tests/kube and the benchmarks (kube-apiserver, etcd, kwok,
# kube-scheduler, kube-controller-manager, kubectl, Kueue), built from the Go module proxy into
# ~/.cache/strata-kube with Go 1.26 (the machine's, or the toolchain fetched from the proxy when it
# has none): tools/kube/README.md. Seconds once built.
kube-deps: deb-deps
	@tools/kube/build.sh >/dev/null

# Seconds once installed: pip runs again only when the requirements changed. Without a registry
# it says so and goes on; the Python client's test then skips, naming the missing module.
py-deps: deb-deps
	@stamp=$(PY_DEPS_DIR)/requirements.txt; \
	if cmp -s $(PY_REQUIREMENTS) $$stamp; then exit 0; fi; \
	python3 -m venv $(PY_DEPS_DIR) && \
	$(PY_DEPS_DIR)/bin/pip install -q --disable-pip-version-check -r $(PY_REQUIREMENTS) && \
	cp $(PY_REQUIREMENTS) $$stamp || \
	echo "py-deps: could not install $(PY_REQUIREMENTS) into $(PY_DEPS_DIR); gateway_openai_py will skip"
	@stamp=$(RAY_DEPS_DIR)/requirements.txt; \
	if cmp -s $(RAY_REQUIREMENTS) $$stamp; then exit 0; fi; \
	python3 -m venv $(RAY_DEPS_DIR) && \
	$(RAY_DEPS_DIR)/bin/pip install -q --disable-pip-version-check -r $(RAY_REQUIREMENTS) && \
	cp $(RAY_REQUIREMENTS) $$stamp || \
	echo "py-deps: could not install $(RAY_REQUIREMENTS) into $(RAY_DEPS_DIR); the live RayJob test will skip"

# Seconds once installed, like py-deps; without a registry the torch test skips, saying why.
torch-deps: deb-deps
	@stamp=$(TORCH_DEPS_DIR)/requirements.txt; \
	if cmp -s $(TORCH_REQUIREMENTS) $$stamp; then exit 0; fi; \
	echo "torch-deps: installing torch into $(TORCH_DEPS_DIR) (about 4 GB)"; \
	python3 -m venv $(TORCH_DEPS_DIR) && \
	$(TORCH_DEPS_DIR)/bin/pip install -q --disable-pip-version-check --no-deps \
	  -r $(TORCH_REQUIREMENTS) && \
	cp $(TORCH_REQUIREMENTS) $$stamp || \
	echo "torch-deps: could not install $(TORCH_REQUIREMENTS) into $(TORCH_DEPS_DIR); torch_ddp_e2e_test will skip"

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release

build-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan

build-fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz

test-release: build
	ctest --preset release

test-asan: build-asan
	ctest --preset asan

# Each fuzz target runs for FUZZ_SECONDS over its corpus in fuzz/corpus/<target>; new inputs go
# to a scratch directory, so the repository's corpus changes only when someone adds to it.
fuzz: build-fuzz
	@set -e; for t in $$(ls build/fuzz/fuzz/ | grep '_fuzz$$'); do \
	  scratch=$$(mktemp -d); \
	  echo "fuzz: $$t for $(FUZZ_SECONDS)s"; \
	  build/fuzz/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/$$t- $$scratch fuzz/corpus/$$t \
	    2>build/fuzz/$$t.log || { tail -50 build/fuzz/$$t.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units' build/fuzz/$$t.log; \
	  rm -rf $$scratch; \
	done

format:
	clang-format -i $(FORMAT_FILES)

format-check: deps
	clang-format --dry-run --Werror $(FORMAT_FILES)

# The house's dependency rules on #include (DESIGN.md "The house").
check-includes:
	tools/check_includes.sh

test: format-check check-includes test-release test-asan fuzz
	@echo "make test: format, includes, release tests, sanitizer tests and fuzzing all passed"

# The main job: validate every example, then the narrated demo on the simulated seed cluster
# (strata up, 32 real allreduce.py workers, the probe pod, the two-team deadlock) until Ctrl-C.
run: build
	build/release/bin/strata apply --dry-run -f examples/ >/dev/null
	cd tools/openai-burst && npm ci --no-audit --no-fund >/dev/null
	examples/demo/run.sh build/release/bin/strata

clean:
	rm -rf build
