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
memory map too small for it), `ldscripts` (target -> linker script, in
place of the target's: a map that also fits a QEMU machine) and `stubs = "always"` (link the ARP
entry-point stubs into uninstrumented variants too, so both variants have
the same code layout), `cflags_for` (target -> extra flags), `target_clock`
(defines TARGET_CLOCK_HZ as the target file's clock) and `third_party`: a
source tree scripts/third-party.py fetches from a package registry (never
committed), with `tree_sources` and `tree_include` (paths in the tree) and
`ports` (target -> { dir, exclude, include }: the port's folder, whose C and
assembly sources are built for that target only). `{example}` in a flag is
the example's folder. Without the tree (no network at set-up) the example
is skipped with a note, or under CI the build fails naming why.

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
import importlib.util
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
        targets[name] = (desc["arch"], guest, path, desc.get("clock_hz", 0))
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


def third_party_tree(name):
    """Where third-party tree `name` is (fetched if missing), or None."""
    spec = importlib.util.spec_from_file_location("third_party", ROOT / "scripts" / "third-party.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.tree_path(name)
    except module.FetchError as e:
        if os.environ.get("CI"):
            sys.exit(f"error: third-party tree {name}: {e}")
        print(f"note: third-party tree {name} is missing ({e}): its examples are not built",
              file=sys.stderr)
        return None


def tree_parts(settings, name, example_dir):
    """The sources and flags a third-party tree adds for target `name`,
    or None when the example is not built for it."""
    port = settings.get("ports", {}).get(name)
    if port is None:
        return None
    tree = third_party_tree(settings["third_party"])
    if tree is None:
        return None
    port_dir = tree / port["dir"]
    skip = set(port.get("exclude", []))
    sources = [tree / s for s in settings.get("tree_sources", [])]
    sources += sorted(p for ext in ("*.c", "*.S") for p in port_dir.glob(ext) if p.name not in skip)
    includes = [tree / i for i in settings.get("tree_include", [])] + [port_dir]
    includes += [tree / i for i in port.get("include", [])]
    return sources, [f"-I{i}" for i in includes]


def jobs(targets, examples, out_dir):
    for name, (arch, guest, target_file, clock_hz) in targets.items():
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
            ldscript = settings.get("ldscripts", {}).get(name, guest["ldscript"])
            extra = settings.get("cflags", []) + settings.get("cflags_for", {}).get(name, [])
            extra = [f.replace("{example}", str(example_dir)) for f in extra]
            if settings.get("target_clock"):
                extra.append(f"-DTARGET_CLOCK_HZ={clock_hz}")
            tree_inputs = []
            if "third_party" in settings:
                parts = tree_parts(settings, name, example_dir)
                if parts is None:
                    continue
                tree_inputs, tree_flags = parts
                extra += tree_flags
            for suffix, flags in variants.items():
                elf = out_dir / name / f"{example_dir.name}{suffix}.elf"
                instrumented = "-DARP_NONE" not in flags
                yield dict(
                    elf=elf, cc=guest["cc"], sources=sources + tree_inputs,
                    stubs=instrumented or settings.get("stubs") == "always",
                    cflags=COMMON_CFLAGS + guest["cflags"] + extra + flags,
                    ldscript=ROOT / ldscript,
                    inputs=sources + tree_inputs + [target_file, ROOT / ldscript, Path(__file__)]
                    + list(example_dir.rglob("*.h"))
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
