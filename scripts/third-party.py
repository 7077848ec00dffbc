#!/usr/bin/env python3
"""Third-party source trees the tests build, fetched from a package registry.

    scripts/third-party.py fetch [NAME]...   fetch what is missing (all by default)
    scripts/third-party.py path NAME         print where NAME is (fetching it first)

Nothing here is ever committed: each tree is unpacked from a pinned package of
a public registry into target/third-party/<name>/, its archive checked against
the checksum pinned below. A tree already there (with its stamp) is not fetched
again, so a second run does no network access. guest-shim/build.py calls this
for the examples that name a tree (`third_party` in their example.toml).

Trees:
  freertos-kernel   FreeRTOS-Kernel V11.2.0, as the crates.io crate
                    freertos-next 0.12.0 ships it (its FreeRTOS-Kernel/ folder):
                    the kernel and its own ports, unmodified
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "target" / "third-party"

TREES = {
    "freertos-kernel": dict(
        crate="freertos-next",
        version="0.12.0",
        sha256="b7824fb42660c16e1b3b573eef99c2fe5c5cba6294a631c309084635f6bfcbb0",
        folder="FreeRTOS-Kernel",
        check="include/task.h",
    ),
}


class FetchError(Exception):
    pass


def cached_crate(crate, version):
    """The .crate file in Cargo's registry cache, if Cargo fetched it."""
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    for index in sorted((home / "registry" / "cache").glob("*")):
        candidate = index / f"{crate}-{version}.crate"
        if candidate.is_file():
            return candidate
    return None


def download(crate, version, into):
    url = f"https://static.crates.io/crates/{crate}/{crate}-{version}.crate"
    target = into / f"{crate}-{version}.crate"
    result = subprocess.run(["curl", "-sSfL", "--retry", "3", "-o", str(target), url],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise FetchError(f"downloading {url} failed: {result.stderr.strip()}")
    return target


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stamp_of(spec):
    return f"{spec['crate']} {spec['version']} {spec['sha256']}\n"


def tree_path(name):
    """Where tree `name` is, fetching it if it is missing."""
    spec = TREES.get(name)
    if spec is None:
        raise FetchError(f"unknown third-party tree `{name}` (known: {', '.join(TREES)})")
    dest = DEST / name
    stamp = dest / ".fetched"
    if stamp.is_file() and stamp.read_text() == stamp_of(spec) and (dest / spec["check"]).is_file():
        return dest
    fetch(name, spec, dest)
    return dest


def fetch(name, spec, dest):
    DEST.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=DEST) as tmp:
        tmp = Path(tmp)
        archive = cached_crate(spec["crate"], spec["version"])
        if archive is None or sha256(archive) != spec["sha256"]:
            archive = download(spec["crate"], spec["version"], tmp)
        got = sha256(archive)
        if got != spec["sha256"]:
            raise FetchError(f"{archive.name}: sha256 {got}, expected {spec['sha256']}")
        prefix = f"{spec['crate']}-{spec['version']}/{spec['folder']}/"
        unpacked = tmp / "tree"
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers()
                       if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
            for m in members:
                m.name = m.name[len(prefix):]
                if m.name.startswith("/") or ".." in Path(m.name).parts:
                    raise FetchError(f"{archive.name}: member {m.name} would leave its folder")
            # Python >= 3.11.4 filters members itself; Debian 12's 3.11.2 cannot
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(unpacked, members=[m for m in members if m.name], **safe)
        if not (unpacked / spec["check"]).is_file():
            raise FetchError(f"{archive.name} has no {spec['folder']}/{spec['check']}")
        (unpacked / ".fetched").write_text(stamp_of(spec))
        if dest.exists():
            shutil.rmtree(dest)
        unpacked.rename(dest)
    print(f"third-party: {name} from {spec['crate']} {spec['version']} in {dest}", file=sys.stderr)


def main(argv):
    if len(argv) >= 1 and argv[0] == "fetch":
        names = argv[1:] or list(TREES)
    elif len(argv) == 2 and argv[0] == "path":
        names = argv[1:]
    else:
        sys.exit(__doc__)
    status = 0
    for name in names:
        try:
            path = tree_path(name)
            if argv[0] == "path":
                print(path)
        except FetchError as e:
            print(f"third-party: {name}: {e}", file=sys.stderr)
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
