#!/usr/bin/env bash
# Measures relaybench's own ceilings on this machine and appends them to
# bench/RESULTS.md with the machine, date and commit:
#   - corpus signing rate (100,000 events of ~1 KB, all cores)
#   - publish against the sink relay (OKs at once, stores nothing), run as a
#     separate process: wait-for-OK and pipelined, 8 connections, 1 KB events,
#     every OK read and matched by id.
# Run it on a quiet machine: other load shows up in every figure.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
EVENTS=${EVENTS:-200000}
bench_work

echo "== signing" >&2
"$rb" corpus --events 100000 --cache-dir off --no-progress | tee "$work/corpus.txt" >&2
signing=$(grep -o 'in [0-9.]*s: [0-9]* events/s' "$work/corpus.txt" || true)

echo "== sink relay" >&2
bench_sink

# Sign the publish corpus once (cached), outside any timed phase.
"$rb" corpus --events "$EVENTS" --cache-dir "$work/cache" --no-progress >&2
for mode in wait pipeline; do
  echo "== publish $mode" >&2
  "$rb" run --relay "$url" --events "$EVENTS" --concurrency 8 --mode "$mode" --window 128 --skip-query \
    --cache-dir "$work/cache" --no-progress --quiet --json "$work/$mode.json" >&2
done
# The sink runs as its own process: its CPU is not the client's.
{
  echo
  echo "## $(date -u +%Y-%m-%dT%H:%MZ) · commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo '-dirty')"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -sr), $(go version | cut -d' ' -f3), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Corpus signing (100,000 events, ~1 KB content, $(grep -o 'with [a-z0-9]*' "$work/corpus.txt" | head -1)): ${signing:-not measured}"
  echo
  echo "Publish to the sink relay (separate process), $EVENTS events, 8 connections, 1 KB average content:"
  echo
  go run ./bench/figures "wait-for-OK=$work/wait.json" "pipelined (window 128)=$work/pipeline.json"
} | tee -a bench/RESULTS.md
