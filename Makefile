# The project's commands. `make demo` and `make test` work on a fresh Debian
# machine: both start with the idempotent bootstrap (scripts/bootstrap.sh).

CARGO ?= cargo
GUESTS := target/guests
DEFAULT_TARGET ?= cortex-m4
DEFAULT_EXAMPLE ?= filter

.PHONY: demo test bootstrap build guests check lint clean fuzz-long

demo: bootstrap build guests
	@echo
	@echo "== running $(DEFAULT_EXAMPLE) on $(DEFAULT_TARGET) =="
	target/release/sim-host run --target $(DEFAULT_TARGET) -o target/demo.arp \
		$(GUESTS)/$(DEFAULT_TARGET)/$(DEFAULT_EXAMPLE).elf
	@echo
	@echo "== the recording: target/demo.arp =="
	@target/release/sim-host arp stats target/demo.arp

test: bootstrap guests
	$(CARGO) build --workspace --release --bins
	$(CARGO) test --workspace --release

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(CARGO) build --workspace --release

guests: bootstrap
	@python3 guest-shim/build.py --out $(GUESTS)

# The format, clippy's warnings as errors, and the code's own rules (tidy:
# layers, crates per layer, circles, function length); `.ci/run` runs it.
lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(CARGO) test --release -p tidy

clean:
	$(CARGO) clean

# The input fuzzers that `make test` runs briefly, run long: the fuzz
# target of every reader (fuzz/, FUZZ_SCALE times its cases), and the
# property tests of target files, ELFs, semihosting, suite manifests, the
# CLI, libarp's C API.
FUZZ_SCALE ?= 100
FUZZ_CASES ?= 100000
# each GDB case is two guest runs (about 30 s)
FUZZ_GDB_CASES ?= 20
fuzz-long: bootstrap guests
	FUZZ_SCALE=$(FUZZ_SCALE) $(CARGO) test --release -p fuzz-targets
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release -p sim-host --test fuzz_inputs --bin sim-host
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release -p libarp --test api_sequences
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release -p arpsim --test proptest_readers
	PROPTEST_CASES=$(FUZZ_GDB_CASES) $(CARGO) test --release -p e2e-tests --test gdb any_huge_packet

# The memsort study (issue 8, STUDY.md): calibrate, predict, simulate, compare.
.PHONY: study
study: bootstrap
	@scripts/study.sh
