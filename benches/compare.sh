#!/usr/bin/env bash
# Runs the throughput benchmark of two builds side by side, on identical traffic.
#
#   benches/compare.sh [--rounds N] OLD [NEW]
#   benches/compare.sh --callgrind OLD [NEW]
#
# OLD is a commit; NEW is a commit or a checkout's directory (default: this checkout,
# as its files are now). Each is built from its own tree, except that both get NEW's
# benches/throughput/traffic.rs, so the old benchmark times the same bytes and every
# shape NEW lists. Commits are checked out in git worktrees (target/compare/old and
# new, reused by later runs); each build has its own target directory beside them.
#
# Timed mode (the default) runs the two binaries alternately, N rounds (default 5;
# old first in odd rounds, new first in even ones), each with the caller's
# DHARA_BENCH_* settings (DHARA_BENCH_MB=2 is a quick run). It prints, per shape and pass: the old and new MB/s (medians over the
# rounds), the ratio new/old of the speeds in each round (median and range), the same
# ratio taken on the "x floor" figures (each run's speed over its own floor, so a
# round in a slow phase of the machine counts less), the ratio of the two builds'
# fastest rounds (other processes only ever slow a run down), the allocations per
# message, and "SLOWER" where both the median ratio and the best rounds' ratio are
# below 0.9 (a row below 0.9 at the median only is marked as such).
#
# Callgrind mode runs each shape once per build under valgrind's callgrind (one
# warm-up and one repetition, DHARA_BENCH_MB=2 unless set) and prints the instructions
# per run of each pass's function (its inclusive cost over its calls), per byte of
# the shape's traffic, and the ratio new/old: counts that do not depend on the load
# of the machine. The runs' files stay in target/compare/runs for callgrind_annotate.
#
# Passes are matched by their letter and their place among the passes of that letter
# ("(b)" first, "(b)" second, ...), so a pass renamed between the builds still pairs.
set -euo pipefail

usage() {
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

rounds=5
mode=timed
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=${2:?}; shift 2 ;;
    --callgrind) mode=callgrind; shift ;;
    -h|--help) usage ;;
    --*) usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] && [ $# -le 2 ] || usage
old=$1
new=${2:-}

root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/target/compare
mkdir -p "$work"

# A checkout of commit $1 at $2 (a detached worktree, reset on every run).
checkout() {
  local rev=$1 dir=$2
  if [ -d "$dir" ]; then
    git -C "$dir" checkout --quiet --force --detach "$rev"
  else
    git -C "$root" worktree add --quiet --force --detach "$dir" "$rev"
  fi
}

# Builds the throughput benchmark in $1 and copies its binary to $2 (a target
# directory of its own for each side: cargo names the binaries of two checkouts of
# one package alike, and may take one for the other).
build() {
  local dir=$1 out=$2 exe
  exe=$(cd "$dir" && CARGO_TARGET_DIR=$out.target cargo bench --bench throughput --no-run --message-format=json 2>"$out.build.log" |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "throughput":
        print(m["executable"])') || { cat "$out.build.log" >&2; exit 1; }
  [ -n "$exe" ] || { cat "$out.build.log" >&2; echo "no throughput binary built in $dir" >&2; exit 1; }
  cp "$exe" "$out.bin"
}

# NEW's tree and its traffic.
if [ -z "$new" ]; then
  new_dir=$root
  new_label="$(git -C "$root" rev-parse --short HEAD) + working tree"
elif [ -d "$new" ]; then
  new_dir=$(cd "$new" && pwd)
  new_label="$new_dir"
else
  new_dir=$work/new
  checkout "$new" "$new_dir"
  new_label=$(git -C "$root" rev-parse --short "$new")
fi
traffic=$new_dir/benches/throughput/traffic.rs

old_dir=$work/old
checkout "$old" "$old_dir"
cp "$traffic" "$old_dir/benches/throughput/traffic.rs"
old_label=$(git -C "$root" rev-parse --short "$old")

echo "building old ($old_label) in $old_dir" >&2
build "$old_dir" "$work/old"
echo "building new ($new_label) in $new_dir" >&2
build "$new_dir" "$work/new"

runs=$work/runs
rm -rf "$runs"
mkdir -p "$runs"

if [ "$mode" = timed ]; then
  for ((i = 1; i <= rounds; i++)); do
    echo "round $i of $rounds" >&2
    # Old first in odd rounds, new first in even ones, so neither side always runs
    # on the heels of the other.
    for side in $(if ((i % 2)); then echo old new; else echo new old; fi); do
      DHARA_BENCH_TSV=1 "$work/$side.bin" >"$runs/$side.$i"
    done
  done
else
  # The passes' functions in throughput.rs (kept `#[inline(never)]` for this). Every
  # instruction is counted, and each function's cost is the sum over the calls made
  # to it (callgrind's inclusive cost), divided by their number.
  functions=${COMPARE_FUNCTIONS:-floor parse decode_view decode write_values write_messages frame round_trips}
  shapes=$(sed -n '/^pub const SHAPES/,/^];/p' "$traffic" | grep -o '"[a-z_]*"' | tr -d '"')
  for shape in $shapes; do
    if [ -n "${DHARA_BENCH_SHAPE:-}" ] && [[ $shape != *"$DHARA_BENCH_SHAPE"* ]]; then
      continue
    fi
    for side in old new; do
      echo "callgrind: $side $shape" >&2
      DHARA_BENCH_TSV=1 DHARA_BENCH_MB=${DHARA_BENCH_MB:-2} DHARA_BENCH_REPS=1 \
        DHARA_BENCH_SHAPE=$shape \
        valgrind --tool=callgrind --dump-instr=no \
        --callgrind-out-file="$runs/$side.$shape.callgrind" \
        "$work/$side.bin" >"$runs/$side.$shape.out" 2>"$runs/$side.$shape.log"
    done
  done
fi

echo "old: $old_label   new: $new_label   mode: $mode" \
  "  DHARA_BENCH_MB=${DHARA_BENCH_MB:-default} DHARA_BENCH_REPS=${DHARA_BENCH_REPS:-default}"
MODE=$mode FUNCTIONS=${functions:-} SHAPES=${shapes:-} python3 - "$runs" <<'PY'
import collections, glob, os, re, sys

runs = sys.argv[1]

def rows(path):
    """The benchmark's rows: TSV from builds that have DHARA_BENCH_TSV, else the table."""
    out = []
    with open(path) as f:
        lines = f.read().splitlines()
    if lines and lines[0].startswith("shape\tpass\t"):
        for line in lines[1:]:
            s, p, b, m, secs, a, r = line.split("\t")
            secs = float(secs)
            out.append(dict(shape=s, pass_=p, mbs=int(b) / 1e6 / secs, per_s=int(m) / secs,
                            floor=float(r), alloc=(int(a) / int(m)) if a else None, bytes=int(b)))
    else:
        for line in lines:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 6 or not re.match(r"^[\d.]+$", cells[2]):
                continue
            s, p, mbs, per_s, r, a = cells
            out.append(dict(shape=s, pass_=p, mbs=float(mbs), per_s=float(per_s), floor=float(r),
                            alloc=float(a) if a else None, bytes=None))
    return out

def keyed(rs):
    """Rows keyed by (shape, letter and place among its letter)."""
    seen = collections.Counter()
    out = {}
    for r in rs:
        m = re.match(r"^\((\w)\)", r["pass_"])
        letter = m.group(1) if m else r["pass_"].split()[0]
        seen[(r["shape"], letter)] += 1
        out[(r["shape"], letter, seen[(r["shape"], letter)])] = r
    return out

def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2

if os.environ["MODE"] == "timed":
    n = len(glob.glob(os.path.join(runs, "old.*")))
    old = [keyed(rows(os.path.join(runs, f"old.{i}"))) for i in range(1, n + 1)]
    new = [keyed(rows(os.path.join(runs, f"new.{i}"))) for i in range(1, n + 1)]
    print(f"{n} rounds, alternating old and new; ratios new/old per round: median (lowest-highest);"
          " best: the fastest round of each build\n")
    print("| shape | pass | old MB/s | new MB/s | new/old | new/old of x floor | best new / best old | allocations/message old / new | |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    flagged = noisy = 0
    for key in new[0]:
        if not all(key in o for o in old) or not all(key in x for x in new):
            print(f"| {key[0]} | {new[0][key]['pass_']} | (not in old) | | | | | |")
            continue
        o = [run[key] for run in old]
        w = [run[key] for run in new]
        ratios = [b["per_s"] / a["per_s"] for a, b in zip(o, w)]
        fratios = [b["floor"] / a["floor"] for a, b in zip(o, w)]
        fmt = lambda v: f"{median(v):.3f} ({min(v):.3f}-{max(v):.3f})"
        alloc = lambda r: "" if r["alloc"] is None else f"{r['alloc']:.1f}"
        allocs = "" if w[0]["alloc"] is None else f"{alloc(o[0])} / {alloc(w[0])}"
        best = max(r["per_s"] for r in w) / max(r["per_s"] for r in o)
        flag = ""
        if median(ratios) < 0.9 and best < 0.9:
            flag, flagged = "SLOWER", flagged + 1
        elif median(ratios) < 0.9:
            flag, noisy = "below 0.9 at the median only", noisy + 1
        print(f"| {key[0]} | {w[0]['pass_']} | {median([r['mbs'] for r in o]):.0f} | "
              f"{median([r['mbs'] for r in w]):.0f} | {fmt(ratios)} | {fmt(fratios)} | {best:.3f} | "
              f"{allocs} | {flag} |")
    print(f"\n{flagged} row(s) SLOWER: below 0.9x at the median and in the best rounds;"
          f" {noisy} more below 0.9x at the median only")
else:
    functions = os.environ["FUNCTIONS"].split()
    def counts(path):
        """Instructions per call of each pass function: its inclusive cost (the
        summed costs of its calls from its callers) over the number of its calls."""
        names, cost, calls = {}, collections.Counter(), collections.Counter()
        current = None
        with open(path) as f:
            lines = f.read().splitlines()
        for k, line in enumerate(lines):
            m = re.match(r"^cfn=\((\d+)\)(?: (.*))?$", line)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                current = m.group(1)
                continue
            m = re.match(r"^c?f[nil]?=\((\d+)\) (.*)$", line)
            if m and line.startswith(("fn=", "cfn=")):
                names[m.group(1)] = m.group(2)
            m = re.match(r"^calls=(\d+) ", line)
            if m and current is not None and k + 1 < len(lines):
                n = int(m.group(1))
                c = int(lines[k + 1].split()[1])
                calls[current] += n
                cost[current] += c
                current = None
        out = {}
        for ident, name in names.items():
            m = re.match(r"^throughput::(\w+)(?:::h[0-9a-f]{16})?$", name)
            if m and m.group(1) in functions and calls[ident]:
                out[m.group(1)] = (cost[ident] / calls[ident], calls[ident])
        return out
    print("Instructions per run of each pass (callgrind, inclusive, over its calls;"
          " per byte of the shape's traffic)\n")
    print("| shape | function | old | new | new/old | old per byte | new per byte | new per call |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for shape in os.environ["SHAPES"].split():
        if not os.path.exists(os.path.join(runs, f"new.{shape}.callgrind")):
            continue
        per_run, nbytes, calls = {}, None, None
        for side in ("old", "new"):
            per_run[side] = counts(os.path.join(runs, f"{side}.{shape}.callgrind"))
            rs = rows(os.path.join(runs, f"{side}.{shape}.out"))
            nbytes = nbytes or next((r["bytes"] for r in rs if r["pass_"].startswith("floor") and r["bytes"]), None)
            calls = calls or next((round(r["per_s"] * r["bytes"] / (r["mbs"] * 1e6))
                                   for r in rs if r["pass_"].startswith("(e)") and r["bytes"]), None)
        for f in functions:
            o = per_run["old"].get(f, (None,))[0]
            w = per_run["new"].get(f, (None,))[0]
            if o is None and w is None:
                continue
            ratio = f"{w / o:.3f}" if o and w else ""
            pb = lambda v: f"{v / nbytes:.2f}" if v and nbytes else ""
            show = lambda v: "-" if v is None else f"{v / 1e6:.3f}M"
            per_call = f"{w / calls:,.0f}" if f == "round_trips" and w and calls else ""
            print(f"| {shape} | {f} | {show(o)} | {show(w)} | {ratio} | {pb(o)} | {pb(w)} | {per_call} |")
PY
