#!/usr/bin/env bash
# Measures relaybench against the fastest peer tool, ../shared/peers/bin/nostr-bench
# (see ../shared/peers/README.md), and appends both to bench/RESULTS.md with
# the machine, date and commit:
#   - one sink relay (OKs at once, stores nothing), run as a separate process;
#   - PAIRS alternating pairs: nostr-bench (-w CONNS --rate 0 --only-peak),
#     then relaybench run --mode wait --skip-query --concurrency CONNS: one
#     connection per worker, one EVENT in flight each, every OK awaited;
#   - both rates, the ratio, and each client's CPU and system calls per event
#     over its publish phase.
# Events are the same size on the wire: nostr-bench's are ~650 bytes, which
# relaybench's corpus reaches with --size 128 (SIZE=1024 for relaybench's
# default). Both sign before the clock; nostr-bench inside its own process,
# so its CPU and system calls are taken from perf stat's 100 ms intervals,
# counting only those of its publish phase (intervals with at least a fifth
# of the busiest interval's system calls); relaybench's the same way, its CPU
# from its own results file. Without perf the CPU columns of nostr-bench and
# the system calls say "–".
# Run it on a quiet machine: other load shows up in every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
PEER=${PEER:-../shared/peers/bin/nostr-bench}
if [ ! -x "$PEER" ]; then
  echo "bench/peers.sh: no peer binary at $PEER (see ../shared/peers/README.md); nothing measured." >&2
  exit 0
fi
CONNS=${CONNS:-4}
EVENTS=${EVENTS:-200000}
PAIRS=${PAIRS:-3}
SIZE=${SIZE:-128}
bench_work
haveperf=""
if command -v perf >/dev/null && perf stat -e raw_syscalls:sys_enter -o /dev/null true 2>/dev/null; then
  haveperf=1
fi

echo "== sink relay" >&2
bench_sink

# Sign relaybench's corpus once (cached), outside any timed phase.
"$rb" corpus --events "$EVENTS" --size "$SIZE" --cache-dir "$work/cache" --no-progress >&2

# phase FILE: "cpu_ms syscalls" summed over the publish-phase intervals of a
# perf stat -I -x, file.
phase() {
  awk -F, '
    /^#/ || NF < 4 { next }
    { t = $1; v = ($2 ~ /^[0-9.]+$/) ? $2 : 0
      if ($4 ~ /task-clock/) cpu[t] = v; else if ($4 ~ /raw_syscalls/) { sc[t] = v; if (v > max) max = v } }
    END { for (t in sc) if (sc[t] >= max / 5) { c += cpu[t]; s += sc[t] }; printf "%.1f %d\n", c, s }' "$1"
}
measure() { # measure OUT CMD...: run CMD, perf stat intervals into OUT if perf is there
  local out=$1; shift
  if [ -n "$haveperf" ]; then
    perf stat -I 100 -x, -o "$out" -e task-clock,raw_syscalls:sys_enter -- "$@"
  else
    : >"$out"
    "$@"
  fi
}

rows=()
for i in $(seq "$PAIRS"); do
  echo "== pair $i: nostr-bench" >&2
  measure "$work/nb$i.perf" "$PEER" -r "$url" -w "$CONNS" --rate 0 --only-peak -e "$EVENTS" -d 30 >"$work/nb$i.out" 2>&1
  nbrate=$(sed -n 's/^ *Events\/sec: *\([0-9.]*\).*/\1/p' "$work/nb$i.out" | head -1)
  read -r nbcpu nbsc < <(phase "$work/nb$i.perf")
  echo "== pair $i: relaybench" >&2
  measure "$work/rb$i.perf" "$rb" run --relay "$url" --mode wait --skip-query --concurrency "$CONNS" \
    --events "$EVENTS" --size "$SIZE" --cache-dir "$work/cache" --no-progress --quiet --json "$work/rb$i.json" >&2
  rbrate=$(grep -o '"events_per_sec": *[0-9.e+]*' "$work/rb$i.json" | head -1 | sed 's/.*: *//')
  rbcpu=$(grep -o '"client_cpu_secs": *[0-9.e+]*' "$work/rb$i.json" | head -1 | sed 's/.*: *//')
  rbcpu=$(awk -v c="$rbcpu" -v e="$EVENTS" 'BEGIN { printf "%.2f", c * 1e6 / e }')
  read -r _ rbsc < <(phase "$work/rb$i.perf")
  rows+=("$nbrate $nbcpu $nbsc $rbrate $rbcpu $rbsc")
done

{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+uncommitted changes)') · relaybench vs nostr-bench (bench/peers.sh)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -sr), $(go version | cut -d' ' -f3), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "One sink relay (separate process), $EVENTS events per run, $CONNS connections each, one EVENT in flight per"
  echo "connection, OK awaited; alternating pairs, nostr-bench first. relaybench --size $SIZE. CPU and system calls"
  echo "per event are the client's own over its publish phase (kernel time included)."
  echo
  echo "| pair | nostr-bench events/s | relaybench events/s | ratio | nostr-bench CPU µs/event | relaybench CPU µs/event | nostr-bench syscalls/event | relaybench syscalls/event |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
  n=0
  for r in "${rows[@]}"; do
    n=$((n + 1))
    echo "$n $r $EVENTS $haveperf" | awk '{
      nb = $2; rb = $5; ev = $8; p = ($9 == "1")
      ratio = (nb > 0) ? sprintf("%.2f×", rb / nb) : "–"
      nbc = p ? sprintf("%.2f", $3 * 1000 / ev) : "–"
      nbs = p ? sprintf("%.2f", $4 / ev) : "–"
      rbs = p ? sprintf("%.2f", $7 / ev) : "–"
      printf "| %d | %.0f | %.0f | %s | %s | %.2f | %s | %s |\n", $1, nb, rb, ratio, nbc, $6, nbs, rbs }'
  done
  nbmed=$(printf '%s\n' "${rows[@]}" | awk '{ print $1 }' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  rbmed=$(printf '%s\n' "${rows[@]}" | awk '{ print $4 }' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  awk -v nb="$nbmed" -v rb="$rbmed" 'BEGIN {
      printf "\nMedians: nostr-bench %.0f events/s, relaybench %.0f events/s, ratio %.2f×.\n", nb, rb, (nb > 0 ? rb / nb : 0) }'
} | tee -a bench/RESULTS.md
