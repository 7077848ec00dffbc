#!/usr/bin/env bash
# Installs what building and testing this project needs, and nothing that is
# already there (idempotent; a second run does no work and no network access).
#
#   scripts/bootstrap.sh            install what is missing
#   scripts/bootstrap.sh --check    only report what is missing (exit 1 if any)
#
# Debian packages:
#   cmake, libclang-dev          unicorn-engine-sys builds Unicorn with cmake
#                                and generates bindings with bindgen
#   patch, curl, tar             unicorn-patch/build.rs applies its patches to
#                                the pristine unicorn-engine-sys crate (taken
#                                from Cargo's cache or downloaded with curl)
#   gcc-arm-none-eabi,           guest compilers and C library for the ARM
#   picolibc-arm-none-eabi       Cortex-M targets (not libnewlib-arm-none-eabi:
#                                it conflicts with picolibc)
#   gcc-riscv64-unknown-elf,     the same for the rv32 targets
#   picolibc-riscv64-unknown-elf
#   qemu-system-arm              independent reference runs of the ARM guests
#   python3                      guest-shim/build.py (tomllib: Python >= 3.11)
#   gcc, make, pkg-config        host C for the libarp end-to-end test
#   valgrind                     callgrind_annotate reads our callgrind output
#   libxml2-utils                xmllint validates the suite's JUnit reports
#                                against tests/schemas/junit.xsd
#   munge, slurmctld, slurmd,    a real single-node Slurm for the job-array
#   slurm-client                 recipe of docs/scale-out.md (the tests start
#                                and stop their own daemons; the packages'
#                                services are not used)
set -euo pipefail

PACKAGES=(
  cmake libclang-dev pkg-config gcc make python3
  patch curl tar ca-certificates  # unicorn-patch/build.rs
  gcc-arm-none-eabi picolibc-arm-none-eabi
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  qemu-system-arm valgrind fonts-dejavu-core
  parallel  # GNU parallel: the docs/scale-out.md recipe test
  libxml2-utils  # xmllint: tests/tests/gates.rs validates the JUnit reports against an XSD
  gdb-multiarch  # tests/tests/gdb.rs: debugging a guest through --gdb
  munge slurmctld slurmd slurm-client  # tests/tests/suite_shards.rs: the Slurm recipe
)
# Tests replace the list to exercise the failure path.
if [[ -n "${BOOTSTRAP_PACKAGES:-}" ]]; then
  read -r -a PACKAGES <<<"$BOOTSTRAP_PACKAGES"
fi

check_only=false
[[ "${1:-}" == "--check" ]] && check_only=true

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

rust_ok=true
for tool in cargo rustc rustfmt cargo-clippy; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "bootstrap: \`$tool\` is not on PATH; install the Rust toolchain (rustup) with rustfmt and clippy" >&2
    rust_ok=false
  fi
done

# Rust guests (`sim-host new --lang rust`, tests/tests/new_project.rs) need
# the cores' Rust targets. Not fatal: without them those tests say SKIPPED.
RUST_GUEST_TARGETS=(thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf riscv32imac-unknown-none-elf)
rust_guest_targets() {
  if ! command -v rustup >/dev/null 2>&1; then
    echo "bootstrap: no rustup: Rust guest targets not installed (Rust guest tests will be skipped)" >&2
    return 0
  fi
  local installed want=()
  installed=$(rustup target list --installed 2>/dev/null || true)
  for t in "${RUST_GUEST_TARGETS[@]}"; do
    grep -qx "$t" <<<"$installed" || want+=("$t")
  done
  [[ ${#want[@]} -eq 0 ]] && return 0
  if $check_only; then
    echo "bootstrap: missing Rust targets: ${want[*]}" >&2
    return 0
  fi
  echo "bootstrap: adding Rust targets ${want[*]}" >&2
  if ! rustup target add "${want[@]}" >&2; then
    echo "bootstrap: could not add Rust targets ${want[*]} (Rust guest tests will be skipped)" >&2
  fi
}
rust_guest_targets

if [[ ${#missing[@]} -eq 0 ]]; then
  $rust_ok || exit 1
  exit 0
fi

if $check_only; then
  echo "bootstrap: missing Debian packages: ${missing[*]}" >&2
  exit 1
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "bootstrap: missing packages (${missing[*]}) and not root; run as root or install sudo" >&2
    exit 1
  fi
fi

echo "bootstrap: installing ${missing[*]}" >&2
log=$(mktemp)
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get update -qq >"$log" 2>&1; then
  echo "bootstrap: \`apt-get update\` failed:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
# Install one at a time so a failure names the package that failed and why.
failed=()
for pkg in "${missing[@]}"; do
  if ! $SUDO apt-get install -y -qq --no-install-recommends "$pkg" >"$log" 2>&1; then
    echo "bootstrap: installing \`$pkg\` failed:" >&2
    grep -E "^(E:|W:)|Unable|conflict|depends" "$log" | tail -n 10 >&2 || tail -n 10 "$log" >&2
    failed+=("$pkg")
  fi
done
rm -f "$log"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bootstrap: failed to install: ${failed[*]}" >&2
  exit 1
fi
$rust_ok || exit 1
echo "bootstrap: done" >&2
