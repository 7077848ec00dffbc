#!/bin/sh
# The memsort study (issue 8, STUDY.md): calibrate the CHIP3S memsort model
# from single-core recordings of the memsort guest, predict every core
# count and size with chips-eval, simulate the same points on sim-host,
# and print predicted vs simulated cycles with the error of each point.
#
#   scripts/study.sh            (or: make study)
#
# Environment: OUT (results folder, default target/study/memsort),
# SIZES (element counts, default "4096 16384 65536"), CORES (default
# "1 2 4 8"), CAL_SIZES (block sizes of the calibration runs, default
# "512 1024 2048 4096 8192 16384 32768 65536"), TARGET_ERROR (percent,
# default 10). Exit status 0 when every run sorted correctly, whatever
# the errors; 1 if a run failed.
# SPDX-License-Identifier: GPL-2.0-or-later
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
OUT=${OUT:-target/study/memsort}
SIZES=${SIZES:-"4096 16384 65536"}
CORES=${CORES:-"1 2 4 8"}
CAL_SIZES=${CAL_SIZES:-"512 1024 2048 4096 8192 16384 32768 65536"}
TARGET_ERROR=${TARGET_ERROR:-10}
MODEL=study/memsort
SIM=target/release/sim-host
CE=target/release/chips-eval
ELF=target/guests/cortex-m4/memsort.elf
CLOCK=25000000

# Always through cargo (a no-op when fresh): never a stale binary.
echo "== building sim-host and chips-eval"
cargo build -q --release -p sim-host -p chips-eval
echo "== building the memsort guest"
python3 guest-shim/build.py --out target/guests --target cortex-m4 --example memsort
mkdir -p "$OUT"

# 1. Single-core recordings: one thread on one core does the work of B
# blocks of n elements (B = 131072/n, at most 64), so every kernel (sort,
# copy, merge of n elements) is measured on one core and averaged over
# B blocks.
echo "== recording the calibration runs (1 thread, 1 core)"
CAL_ARGS=""
for n in $CAL_SIZES; do
    B=$((131072 / n))
    [ "$B" -gt 64 ] && B=64
    [ "$B" -lt 2 ] && B=2
    N=$((n * B))
    "$SIM" run --target cortex-m4 --cores 1 --mode record_all -q \
        -o "$OUT/cal-$n.arp" --report-json "$OUT/cal-$n.json" \
        "$ELF" -- "$N" "$B" 1 > "$OUT/cal-$n.out"
    grep -q "sorted ok" "$OUT/cal-$n.out" || { echo "calibration run n=$n failed:"; cat "$OUT/cal-$n.out"; exit 1; }
    echo "   n=$n: $(cat "$OUT/cal-$n.out")"
    CAL_ARGS="$CAL_ARGS --arp n=$n,size=$((n * 4)):$OUT/cal-$n.arp"
done

# 2. Calibration: sort and merge as laws of n, the exchange (block copy)
# as the inpcom device (start-up + size/bandwidth).
echo "== calibrating $MODEL/cortex-m4-sim.toml"
# shellcheck disable=SC2086
"$CE" calibrate $CAL_ARGS \
    --section ato_kernel_sort=2 --section ato_kernel_copy=3 --section ato_kernel_merge=4 \
    --model "$MODEL/memsort.la" -I "$MODEL" --hardware "$MODEL/cortex-m4-sim.toml" \
    -o "$OUT/cortex-m4-sim-calibrated.toml" \
    --law ato_kernel_sort=n --law ato_kernel_merge=n --inpcom ato_kernel_copy=size \
    > "$OUT/calibrate.txt" 2>&1 || { cat "$OUT/calibrate.txt"; exit 1; }
grep -E "^(kernel|inpcom)" "$OUT/calibrate.txt" | sed 's/^/   /'

# 3. Predictions for every size and core count.
echo "== predicting with chips-eval"
list() { echo "$1" | tr -s ' ' ',' | sed 's/^,//; s/,$//'; }
"$CE" run "$MODEL/memsort.la" -I "$MODEL" --hardware "$OUT/cortex-m4-sim-calibrated.toml" \
    --set "Nproc=$(list "$CORES")" --set "Nelem=$(list "$SIZES")" \
    --format csv -o "$OUT/predicted.csv" --plot "$OUT/predicted.svg"

# 4. The parallel guest on P simulated cores: the sort's time is section 1
# (main thread, from creating the threads to joining them).
echo "== simulating on sim-host"
for N in $SIZES; do
    for P in $CORES; do
        "$SIM" run --target cortex-m4 --cores "$P" --mode record_all -q \
            -o "$OUT/sim-$N-$P.arp" --report-json "$OUT/sim-$N-$P.json" \
            "$ELF" -- "$N" "$P" > "$OUT/sim-$N-$P.out"
        grep -q "sorted ok" "$OUT/sim-$N-$P.out" || { echo "run N=$N P=$P failed:"; cat "$OUT/sim-$N-$P.out"; exit 1; }
    done
done

# 5. The table.
python3 - "$OUT" "$CLOCK" "$TARGET_ERROR" "$SIZES" "$CORES" <<'PY'
import csv, json, sys
out, clock, target = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
sizes, cores = sys.argv[4].split(), sys.argv[5].split()
pred = {}
with open(f"{out}/predicted.csv") as f:
    for row in csv.DictReader(f):
        pred[(int(float(row["Nelem"])), int(float(row["Nproc"])))] = float(row["time_s"]) * clock
rows, missed = [], 0
for n in map(int, sizes):
    for p in map(int, cores):
        rep = json.load(open(f"{out}/sim-{n}-{p}.json"))
        sec = {tuple(s["path"]): s for s in rep["sections"]}
        sim = sec[(1,)]["total_cycles"]
        kern = lambda sid: sec.get((1, sid), {"max_cycles": 0})["max_cycles"]
        pr = pred[(n, p)]
        err = (pr - sim) / sim * 100
        missed += abs(err) > target
        rows.append((n, p, pr, sim, err, kern(2)))
base = {n: sim for n, p, pr, sim, err, k in rows if p == 1}
lines = [f"{'N':>7} {'P':>3} {'predicted':>12} {'simulated':>12} {'error':>8} {'speed-up':>9}  slowest sort"]
for n, p, pr, sim, err, k in rows:
    su = base[n] / sim if n in base else float("nan")
    lines.append(f"{n:>7} {p:>3} {pr:>12.0f} {sim:>12d} {err:>+7.2f}% {su:>9.2f}  {k}")
lines.append(f"cycles at 25 MHz; error = (predicted - simulated) / simulated; "
             f"max |error| {max(abs(r[4]) for r in rows):.2f}%, "
             f"{missed} of {len(rows)} point(s) above {target:g}%")
text = "\n".join(lines)
print(text)
open(f"{out}/table.txt", "w").write(text + "\n")
# predicted (lines) and simulated (dots) cycles against P, log scale
import math
W, H, L, R, T, B = 720, 480, 90, 560, 40, 420
ys = [v for r in rows for v in (r[2], r[3])]
lo, hi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
ps = sorted({r[1] for r in rows})
X = lambda p: L + (R - L) * (math.log2(p) - math.log2(ps[0])) / max(1e-9, math.log2(ps[-1]) - math.log2(ps[0]))
Y = lambda v: B - (B - T) * (math.log10(v) - lo) / (hi - lo)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{(L + R) / 2}" y="22" text-anchor="middle" font-size="15">memsort on cortex-m4: predicted (lines) vs simulated (dots)</text>',
       f'<path d="M{L},{T} L{L},{B} L{R},{B}" stroke="black" fill="none"/>',
       f'<text x="{(L + R) / 2}" y="{B + 35}" text-anchor="middle">cores P</text>',
       f'<text x="20" y="{(T + B) / 2}" transform="rotate(-90 20 {(T + B) / 2})" text-anchor="middle">cycles</text>']
for p in ps:
    svg.append(f'<text x="{X(p)}" y="{B + 16}" text-anchor="middle">{p}</text>')
for e in range(lo, hi + 1):
    svg.append(f'<line x1="{L}" y1="{Y(10**e)}" x2="{R}" y2="{Y(10**e)}" stroke="#ddd"/><text x="{L - 6}" y="{Y(10**e) + 4}" text-anchor="end">1e{e}</text>')
colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
for i, n in enumerate(sorted({r[0] for r in rows})):
    c = colours[i % len(colours)]
    pts = [r for r in rows if r[0] == n]
    svg.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (c, " ".join(f"{X(r[1])},{Y(r[2])}" for r in pts)))
    for r in pts:
        svg.append(f'<circle cx="{X(r[1])}" cy="{Y(r[3])}" r="4" fill="{c}"><title>N={n} P={r[1]}: predicted {r[2]:.0f}, simulated {r[3]}, {r[4]:+.2f}%</title></circle>')
    svg.append(f'<text x="{R + 20}" y="{T + 20 + 20 * i}" fill="{c}">N = {n}</text>')
svg.append("</svg>")
open(f"{out}/study.svg", "w").write("\n".join(svg) + "\n")
with open(f"{out}/table.csv", "w") as f:
    f.write("N,P,predicted_cycles,simulated_cycles,error_percent\n")
    for n, p, pr, sim, err, k in rows:
        f.write(f"{n},{p},{pr:.0f},{sim},{err:.3f}\n")
PY
echo "== results in $OUT (table.txt, table.csv, study.svg: predicted vs simulated,
    predicted.svg: chips-eval's plot, calibrate.txt, cortex-m4-sim-calibrated.toml)"
