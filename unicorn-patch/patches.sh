#!/usr/bin/env bash
# The Unicorn patches as a git history, and back (CONTRIBUTING.md, "Upgrading
# Unicorn"). The patches stay the source of truth: build.rs applies the
# files named in `series`, in order, with zero fuzz.
#
#   patches.sh tree DIR [--crate FILE]
#       DIR (new) gets the pristine unicorn-engine-sys crate as a first
#       commit, then one commit per patch of `series`, its subject the
#       patch's file name. Edit, rebase or reorder those commits there.
#   patches.sh export DIR [--to OUT]
#       Writes each commit after the pristine one back to
#       unicorn-patch/<subject> (or OUT/<subject>) and rewrites `series`
#       there in commit order.
#
# The pristine crate is --crate FILE, Cargo's registry cache, or a download
# from static.crates.io; whichever it is must have build.rs's checksum.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
crate=$(sed -n 's/^const CRATE: &str = "\(.*\)";/\1/p' "$here/build.rs")
sha256=$(sed -n 's/^const SHA256: &str = "\(.*\)";/\1/p' "$here/build.rs")
url="https://static.crates.io/crates/unicorn-engine-sys/$crate.crate"
pristine_subject="pristine $crate"
git_as=(git -c user.name=unicorn-patch -c user.email=unicorn-patch@localhost
    -c commit.gpgsign=false -c core.autocrlf=false)

die() {
    echo "patches.sh: $*" >&2
    exit 1
}

usage() {
    sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

checksum_ok() {
    [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$sha256" ]]
}

# Prints the path of a pristine .crate file with the pinned checksum.
find_crate() {
    local given=$1 home=${CARGO_HOME:-$HOME/.cargo} candidate
    if [[ -n $given ]]; then
        checksum_ok "$given" || die "$given: not $crate.crate with sha256 $sha256"
        echo "$given"
        return
    fi
    for candidate in "$home"/registry/cache/*/"$crate.crate"; do
        if checksum_ok "$candidate"; then
            echo "$candidate"
            return
        fi
    done
    candidate=$(mktemp --suffix=.crate)
    curl -fsSL --retry 3 -o "$candidate" "$url" || die "downloading $url failed"
    checksum_ok "$candidate" || die "$url does not have the pinned sha256 $sha256"
    echo "$candidate"
}

tree() {
    local dir=$1 file=$2 patch
    [[ -e $dir ]] && die "$dir exists: give a new directory"
    file=$(find_crate "$file")
    mkdir -p "$dir"
    tar xzf "$file" -C "$dir" --strip-components=1
    cd "$dir"
    "${git_as[@]}" init -q
    "${git_as[@]}" add -A
    "${git_as[@]}" commit -q -m "$pristine_subject"
    while read -r patch; do
        [[ -z $patch || $patch == \#* ]] && continue
        patch -p1 --fuzz=0 --forward --batch --no-backup-if-mismatch \
            -i "$here/$patch" >/dev/null || die "$patch does not apply with zero fuzz"
        "${git_as[@]}" add -A
        "${git_as[@]}" commit -q -m "$patch"
    done <"$here/series"
    echo "$dir: $(git rev-list --count HEAD) commits (pristine + patches)"
}

export_patches() {
    local dir=$1 out=$2 base commit subject series
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    cd "$dir"
    base=$(git log --format=%H --grep="^$pristine_subject\$" | tail -1)
    [[ -n $base ]] || die "$dir has no '$pristine_subject' commit: make it with 'tree'"
    series=$(mktemp)
    for commit in $(git rev-list --reverse "$base..HEAD"); do
        subject=$(git log -1 --format=%s "$commit")
        [[ $subject =~ ^[a-z0-9-]+\.patch$ ]] ||
            die "commit $commit: subject '$subject' is not a patch file name (name.patch)"
        git diff --no-color --no-ext-diff --no-renames "$commit^" "$commit" >"$out/$subject"
        echo "$subject" >>"$series"
    done
    mv "$series" "$out/series"
    echo "wrote $(wc -l <"$out/series") patches and series to $out"
}

[[ $# -ge 2 ]] || usage
case $1 in
tree)
    [[ $# -eq 2 || ($# -eq 4 && $3 == --crate) ]] || usage
    tree "$2" "${4:-}"
    ;;
export)
    [[ $# -eq 2 || ($# -eq 4 && $3 == --to) ]] || usage
    export_patches "$2" "${4:-$here}"
    ;;
*) usage ;;
esac
