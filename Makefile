# The two commands the README names: `make run` and `make test`. Everything else supports them.
SHELL := /bin/bash
LLM_DIR ?= .cache/llm
export CARGO_TERM_COLOR ?= never

.PHONY: run test build llm lint bench clean image image-verify measurements

## Start model server + enclave + relay on embedded defaults; Ctrl-C stops everything.
run: build llm
	@tools/run.sh

## Every test: unit, known-answer vectors, storage (SQLite, and PostgreSQL when DATABASE_URL
## is set), end to end against the real model server, the fuzz smoke run and the web app's.
## tools/test.sh compiles the binaries the tests start itself, with the tests' features, and
## runs the lints beside the suites.
test: llm
	@tools/test.sh

## Development binaries: the enclave can serve dev quotes (only when its config asks).
build:
	cargo build --locked --bins --features enclave/dev-quotes,relay/failpoints

llm:
	@tools/llm/install.sh $(LLM_DIR)

lint:
	cargo fmt --all -- --check
	cargo fmt --manifest-path tests/fuzz/Cargo.toml -- --check
	cargo clippy --locked --workspace --all-targets --all-features -- -D warnings

## Benchmarks: enclave crypto, quote verification, sealed objects (criterion), debits/s, log
## appends/s and proofs at 1M entries, provisioning round trips, swap quotes and sessions per
## minute, the proxy's added latency, the private route's overhead and its rate at saturation,
## and load and memory against nginx (docs/benchmarks.md).
bench:
	cargo bench --locked -p shared --all-features
	cargo bench --locked -p enclave --bench sealed
	cargo bench --locked -p relay --bench debits
	cargo bench --locked -p relay --bench log
	cargo build --locked --release --bins --features enclave/dev-quotes
	cargo bench --locked -p e2e --bench provision
	cargo bench --locked -p e2e --bench swaps
	cargo bench --locked -p e2e --bench proxy
	cargo bench --locked -p e2e --bench private_route
	cargo bench --locked -p e2e --bench private_load
	cargo bench --locked -p e2e --bench wallets
	tools/bench/load.sh

## The reproducible enclave image (image/out) and its measurements; see docs/auditing.md.
image:
	image/build.sh image/out

## Build the image twice in two folders; fail unless every artifact is identical.
image-verify:
	image/verify.sh

## Refresh measurements/measurements.json from the image the current source builds.
measurements: image
	cp image/out/measurements.json measurements/measurements.json

clean:
	cargo clean
	rm -rf .cache data
