#!/usr/bin/env bash
# Measures the open-loop scheduler's ceiling: relaybench load at a constant
# RATE (default 80,000 events/s) for DURATION (default 20s) against the sink
# relay (OKs at once, stores nothing) run as a separate process, every OK
# read and matched. Prints the achieved rate, the lateness p99 (actual send
# − intended; target ≤ 1 ms) and the verdict, for bench/RESULTS.md.
# Run it on a quiet machine: other load shows up as
# lateness. Needs jq.
#
#   RATE=80000 DURATION=20s POOL=512 CONNECTIONS=8 bench/scheduler.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
RATE=${RATE:-80000}
DURATION=${DURATION:-20s}
POOL=${POOL:-512}
CONNECTIONS=${CONNECTIONS:-8}
SIZE=${SIZE:-1024}
command -v jq >/dev/null || { echo "bench/scheduler.sh needs jq" >&2; exit 2; }
bench_work

bench_sink

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
"$rb" load --relay "$url" --load-pattern constant --load-base "$RATE" --load-duration "$DURATION" \
  --load-pool "$POOL" --load-connections "$CONNECTIONS" --size "$SIZE" --load-max-events 4000000 \
  --no-progress --quiet --json "$work/load.json" >&2

# Figures from the results file only.
read -r intended sent accepted dropped failed secs lat_p99 lat_max disp_p99 ok_p50 ok_p99 cpu limited sched <<<"$(jq -r '
  .runs[0].phases[] | select(.workload == "load") |
  [ .counts.intended, .counts.sent, .counts.accepted, .counts.dropped, .counts.failed, (.duration_ns / 1e9),
    .latency.lateness.percentiles_ns["99"], .latency.lateness.max_ns, .latency.lateness_dispatch.percentiles_ns["99"],
    .latency.ok.percentiles_ns["50"], .latency.ok.percentiles_ns["99"], .resources.client_cpu_secs,
    (.client_limited // false), (.counts.client_sched_p99_ns // 0) ] | @tsv' "$work/load.json")"
relay_cpu=$(ps -o cputime= -p "$relaypid" | tr -d ' ')
summary=$(awk -v i="$intended" -v s="$sent" -v a="$accepted" -v d="$dropped" -v f="$failed" -v t="$secs" \
  -v lp="$lat_p99" -v lm="$lat_max" -v dp="$disp_p99" -v o5="$ok_p50" -v o9="$ok_p99" -v c="$cpu" -v lim="$limited" -v rate="$RATE" -v sch="$sched" 'BEGIN {
  printf "offered %d/s: intended %d, sent %d, accepted %d (%.0f/s over %.2fs), dropped %d, failed %d\n", rate, i, s, a, a/t, t, d, f
  printf "lateness p99 %.3f ms (max %.3f ms, dispatcher p99 %.3f ms); OK latency from intended time p50 %.3f ms, p99 %.3f ms\n", lp/1e6, lm/1e6, dp/1e6, o5/1e6, o9/1e6
  printf "client CPU %.2f s = %.1f µs/event (%.2f cores); client goroutines waited p99 %.3f ms to run; client-limited: %s\n", c, c/s*1e6, c/t, sch/1e6, lim
  verdict = (d == 0 && f == 0 && a >= 0.99*i && lp <= 1e6) ? "MET" : "NOT MET"
  printf "target (all %d/s accepted on time, lateness p99 ≤ 1 ms): %s\n", rate, verdict
}')
{
  echo "scheduler benchmark $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '-dirty')"
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average before: $load_before"
  echo "relaybench load --load-pattern constant --load-base $RATE --load-duration $DURATION --load-pool $POOL --load-connections $CONNECTIONS --size $SIZE; sink relay as a separate process (its CPU time: $relay_cpu)"
  echo "$summary"
}
