#!/usr/bin/env bash
# CI of the Python package (docs/python.md), run by .ci/run after `cargo test` (which builds
# target/debug/pcsim, the binary the tests compare the Python results with):
#   1. maturin in a build venv (kept between runs; created once),
#   2. the wheel, built in release mode from python/Cargo.toml into target/python-ci/wheels,
#   3. a fresh venv with only the wheel, pytest and Dask installed (pip's cache keeps it quick),
#   4. pytest on python/tests, from the repository root so `import pcsim` is the installed wheel.
# Idempotent and quiet; prints the wheel's size and build time.
set -euo pipefail
cd "$(dirname "$0")/.."
work=target/python-ci
build_venv=$work/build-venv
if [ ! -x "$build_venv/bin/maturin" ]; then
    python3 -m venv "$build_venv"
    "$build_venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.9.4,<2"
fi
# The bindings' crate is its own workspace (python/Cargo.toml, python/Cargo.lock): lint it here. It
# builds into the root's target/ so the core's compiled packages are reused.
export CARGO_TARGET_DIR="$PWD/target"
PYO3_PYTHON=python3 cargo clippy --quiet --locked --manifest-path python/Cargo.toml -- -D warnings
rm -rf "$work/wheels"
start=$(date +%s)
"$build_venv/bin/maturin" build --quiet --release --locked -m python/Cargo.toml \
    --interpreter python3 --out "$work/wheels" 2> "$work/maturin.log" || { cat "$work/maturin.log" >&2; exit 1; }
wheel=$(ls "$work"/wheels/pcsim-*.whl)
echo "python wheel: $(basename "$wheel"), $(( $(stat -c %s "$wheel") / 1024 )) KiB, built in $(( $(date +%s) - start )) s"
test_venv=$work/test-venv
rm -rf "$test_venv"
python3 -m venv "$test_venv"
"$test_venv/bin/pip" install -q --disable-pip-version-check pytest dask distributed pandas "$wheel"
set +e
PCSIM_REQUIRE_OPTIONAL=1 PCSIM_BIN="$PWD/target/debug/pcsim" "$test_venv/bin/pytest" -q -p no:cacheprovider python/tests
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "python tests: pytest collected no test (exit 5); python/tests must not be empty" >&2
    exit 1
fi
exit "$status"
