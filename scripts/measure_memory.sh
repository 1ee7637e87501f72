#!/usr/bin/env bash
# Peak memory (max RSS, /usr/bin/time -v) of every path of `hlo-opt` on
# generated modules: text and proto, read and write, and the default
# pipeline, next to the sizes of the input and output (issue 11, class 6).
#
#   scripts/measure_memory.sh [N] [BIN]
#
# N: instructions of the chain module (default 1000000); a module of N/10
# small computations is measured too. BIN: the hlo-opt binary (default
# target/release/hlo-opt; build it first with `cargo build --release`).
# Prints a table; docs/reliability.md records the figures.
set -euo pipefail
N=${1:-1000000}
BIN=${2:-target/release/hlo-opt}
BIN=$(realpath "$BIN")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# One entry computation, N negates in a chain (the probe's gen_chain.py).
python3 - "$N" "$W/chain.hlo" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write("HloModule chain\n\nENTRY e {\n  x0 = f32[4] parameter(0)\n")
    for i in range(1, n):
        f.write(f"  x{i} = f32[4] negate(x{i-1})\n")
    f.write(f"  ROOT r = f32[4] negate(x{n-1})\n}}\n")
PY
# N/10 computations of two instructions, each called once from the entry.
python3 - "$((N / 10))" "$W/comps.hlo" <<'PY'
import sys
n, out = int(sys.argv[1]), sys.argv[2]
with open(out, "w") as f:
    f.write("HloModule comps\n\n")
    for i in range(n):
        f.write(f"c{i} {{\n  p{i} = f32[4] parameter(0)\n  ROOT n{i} = f32[4] negate(p{i})\n}}\n\n")
    f.write("ENTRY e {\n  y0 = f32[4] parameter(0)\n")
    for i in range(n):
        f.write(f"  y{i+1} = f32[4] call(y{i}), to_apply=c{i}\n")
    f.write(f"  ROOT r = f32[4] negate(y{n})\n}}\n")
PY

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
printf '%-8s %-34s %10s %10s %10s %8s %7s\n' module path "in MiB" "out MiB" "peak MiB" "peak/max" "s"
run() { # module label input output args...
  local module=$1 label=$2 in=$3 out=$4; shift 4
  local log="$W/time.log"
  /usr/bin/time -v "$BIN" "$@" "$in" -o "$out" 2>"$log" >/dev/null
  local kib secs isz osz
  kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
  secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$log")
  isz=$(stat -c %s "$in"); osz=$(stat -c %s "$out")
  local big=$(( isz > osz ? isz : osz ))
  printf '%-8s %-34s %10s %10s %10s %8.2f %7s\n' "$module" "$label" "$(mib "$isz")" "$(mib "$osz")" \
    "$(mib $((kib * 1024)))" "$(awk -v k="$kib" -v b="$big" 'BEGIN { print k * 1024 / b }')" "$secs"
}
for m in chain comps; do
  run $m "text -> text (--passes '')" "$W/$m.hlo" "$W/$m.out.hlo" --passes ''
  run $m "text -> proto (--passes '')" "$W/$m.hlo" "$W/$m.pb" --passes ''
  run $m "proto -> text (--passes '')" "$W/$m.pb" "$W/$m.back.hlo" --passes ''
  run $m "proto -> proto (--passes '')" "$W/$m.pb" "$W/$m.back.pb" --passes ''
  run $m "text -> text, default pipeline" "$W/$m.hlo" "$W/$m.pipe.hlo" --all-computations
  run $m "proto -> proto, default pipeline" "$W/$m.pb" "$W/$m.pipe.pb" --all-computations
done
