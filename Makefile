# TableSync — see README.md. Every target installs what it needs first (`make deps`).
SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: all build test lint format stress fuzz demo bench bench-scale bench-smoke deps clean package package-test

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(BUILD_FLAGS)

test: deps
	@scripts/run-tests.sh

# The code as swift-format writes it (.swift-format: 4 spaces, 120 columns), and no line longer than 120 columns
# (swift-format does not break string literals); CI runs it before the tests.
lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests examples
	@long="$$(grep -rn --include='*.swift' '.\{121,\}' Package.swift Sources Tests examples || true)"; \
	if [ -n "$$long" ]; then echo "lines over 120 columns:"; echo "$$long"; exit 1; fi

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests examples

stress: deps
	@scripts/stress.sh

fuzz: deps
	@scripts/fuzz.sh

demo: deps
	$(SWIFT) build $(BUILD_FLAGS)
	@scripts/demo.sh

bench: deps
	@scripts/bench.sh

# The million-record points (server pages on SQLite and PostgreSQL, the client at 1,000,000 records); ~25 GB of disk.
bench-scale: deps
	@scripts/bench-scale.sh

# A tiny data set on the debug build: seconds once built; proves the benchmarks still run (CI may call it).
bench-smoke: deps
	@scripts/bench.sh smoke

# Debian packages of both programs and a tarball, in dist/ (scripts/package.sh; docs/packaging.md).
package:
	@scripts/install-deps.sh dpkg-dev binutils lintian
	@scripts/package.sh

# The packages installed, used and removed in a minimal Debian root without Swift (scripts/package-test.sh).
package-test: package
	@scripts/install-deps.sh debootstrap
	@scripts/package-test.sh

clean:
	rm -rf .build .build-* dist
