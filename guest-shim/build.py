#!/usr/bin/env python3
"""Build every guest example for every target.

    guest-shim/build.py [--out target/guests] [--target NAME]... [--example NAME]...

The compiler, flags and linker script of each target come from its
description, targets/<name>.toml (table [guest]), so the target files stay the
one place that says how a core is built for. Each example is a folder
guest-shim/examples/<example>/ with C and assembly sources; sources in a
subfolder named after an architecture (arm/, riscv/) are built only for
targets of that architecture, and an example whose every source is
architecture-specific is skipped on the others. An optional example.toml may
set `cflags` (extra flags), `variants` (output suffix -> extra flags),
`targets` (build only for these), `exclude_targets` (not for these: a
memory map too small for it) and `stubs = "always"` (link the ARP
entry-point stubs into uninstrumented variants too, so both variants have
the same code layout).

Every example is built in two variants by default:
    <example>.elf       -DARP_SIM, linked with the ARP entry-point stubs
    <example>-none.elf  -DARP_NONE, no instrumentation at all
into target/guests/<target>/. A build is skipped when the ELF is newer than
every input. Exit status is non-zero if any build fails; the compiler's
message names the file and line. The simthread.h stubs are linked into
every guest (the linker drops them when unused).
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHIM = ROOT / "guest-shim"
DEFAULT_VARIANTS = {"": ["-DARP_SIM"], "-none": ["-DARP_NONE"]}
COMMON_CFLAGS = [
    "-O2", "-g", "-std=gnu11", "-Wall", "-Wno-unused-label",
    "--specs=picolibc.specs", "--oslib=semihost", "--crt0=semihost",
    f"-I{SHIM / 'include'}",
]
# The stubs must keep one address per function (see arp_stubs.c).
STUB_CFLAGS = ["-fno-ipa-icf", "-Wno-ignored-qualifiers"]
ARCH_DIRS = {"arm", "riscv"}


def load_targets(names):
    targets = {}
    for path in sorted((ROOT / "targets").glob("*.toml")):
        with open(path, "rb") as f:
            try:
                desc = tomllib.load(f)
            except tomllib.TOMLDecodeError as e:
                sys.exit(f"error: {path}: {e}")
        name = desc.get("name", path.stem)
        if names and name not in names:
            continue
        guest = desc.get("guest")
        if not guest:
            sys.exit(f"error: {path}: missing table [guest]")
        for key in ("cc", "cflags", "ldscript"):
            if key not in guest:
                sys.exit(f"error: {path}: [guest] has no field `{key}`")
        targets[name] = (desc["arch"], guest, path)
    missing = set(names or ()) - set(targets)
    if missing:
        sys.exit(f"error: unknown target(s): {', '.join(sorted(missing))}")
    return targets


def example_sources(example_dir, arch):
    common = sorted(p for ext in ("*.c", "*.S") for p in example_dir.glob(ext))
    specific = sorted(p for ext in ("*.c", "*.S") for p in (example_dir / arch).glob(ext))
    has_other_arch = any((example_dir / a).is_dir() for a in ARCH_DIRS - {arch})
    if not specific and has_other_arch and not common:
        return None
    if not common and not specific:
        return None
    return common + specific


def jobs(targets, examples, out_dir):
    for name, (arch, guest, target_file) in targets.items():
        for example_dir in sorted(p for p in (SHIM / "examples").iterdir() if p.is_dir()):
            if examples and example_dir.name not in examples:
                continue
            sources = example_sources(example_dir, arch)
            if sources is None:
                continue
            settings = {}
            settings_file = example_dir / "example.toml"
            if settings_file.exists():
                with open(settings_file, "rb") as f:
                    settings = tomllib.load(f)
            if "targets" in settings and name not in settings["targets"]:
                continue
            if name in settings.get("exclude_targets", []):
                continue
            variants = settings.get("variants", DEFAULT_VARIANTS)
            for suffix, flags in variants.items():
                elf = out_dir / name / f"{example_dir.name}{suffix}.elf"
                instrumented = "-DARP_NONE" not in flags
                yield dict(
                    elf=elf, cc=guest["cc"], sources=sources,
                    stubs=instrumented or settings.get("stubs") == "always",
                    cflags=COMMON_CFLAGS + guest["cflags"] + settings.get("cflags", []) + flags,
                    ldscript=ROOT / guest["ldscript"],
                    inputs=sources + [target_file, ROOT / guest["ldscript"], Path(__file__)]
                    + ([settings_file] if settings else [])
                    + list((SHIM / "include").glob("*.h")) + list((SHIM / "src").glob("*")),
                )


def up_to_date(job):
    if not job["elf"].exists():
        return False
    built = job["elf"].stat().st_mtime
    return all(p.stat().st_mtime <= built for p in job["inputs"])


def build(job):
    if up_to_date(job):
        return job["elf"], None
    job["elf"].parent.mkdir(parents=True, exist_ok=True)
    objs = []
    cmds = []
    tmp = job["elf"].parent / ".obj" / job["elf"].stem
    tmp.mkdir(parents=True, exist_ok=True)
    # the stubs themselves always see the instrumented API
    stub_flags = [f for f in job["cflags"] if f != "-DARP_NONE"]
    stub_sources = (["arp_stubs.c"] if job["stubs"] else []) + ["simthread_stubs.c"]
    for source in stub_sources:
        stub_obj = tmp / source.replace(".c", ".o")
        cmds.append([job["cc"], *stub_flags, *STUB_CFLAGS, "-c", str(SHIM / "src" / source),
                     "-o", str(stub_obj)])
        objs.append(str(stub_obj))
    link = [job["cc"], *job["cflags"], f"-T{job['ldscript']}", *map(str, job["sources"]), *objs,
            "-o", str(job["elf"])]
    for cmd in cmds + [link]:
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            return job["elf"], f"$ {' '.join(cmd)}\n{result.stdout}{result.stderr}"
    return job["elf"], None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "target" / "guests"))
    parser.add_argument("--target", action="append")
    parser.add_argument("--example", action="append")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    targets = load_targets(args.target)
    todo = list(jobs(targets, args.example, Path(args.out)))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        for elf, error in pool.map(build, todo):
            if error:
                failed += 1
                print(f"error: building {elf.relative_to(ROOT) if elf.is_relative_to(ROOT) else elf} failed:\n{error}",
                      file=sys.stderr)
    print(f"guests: {len(todo) - failed} of {len(todo)} built in {args.out}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
