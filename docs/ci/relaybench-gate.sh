#!/bin/sh
# relaybench-gate.sh: benchmark a relay's baseline and candidate builds in CI
# and gate on the result. docs/ci/github-actions.yml calls it; run it by
# hand to see what CI will do.
#
#   relaybench-gate.sh BASE_RELAY CAND_RELAY OUTDIR
#
# BASE_RELAY and CAND_RELAY are relays as compare --relays takes them, with
# the SAME name so that their runs are compared, e.g.
#   myrelay='./base/bin/myrelay --port {port} --data {dir}'
#   myrelay='./cand/bin/myrelay --port {port} --data {dir}'
#
# Environment (all optional):
#   RELAYBENCH        the relaybench binary (default: relaybench)
#   REPEAT            runs per build (default 5; --fail-on needs 4 or more)
#   BENCH_ARGS        workload flags for both builds (default: --events 5000 --queries 100)
#   THRESHOLDS        a thresholds TOML file: thresholds = [...] judge the
#                     candidate, fail_on = [...] its change from the baseline
#   THRESHOLD_ARGS    more --threshold flags for the candidate, e.g.
#                     "--threshold verification==passed"
#   FAIL_ON           space-separated --fail-on limits (default: publish.rate:-10% query.rate:-10%)
#
# Writes to OUTDIR: base.json and cand.json (results files), report.html
# (both builds), comparison.md (the table to post on the pull request),
# junit-candidate.xml and junit-fail-on.xml.
#
# Exit status: the candidate's verdict when it is not 0 (3 wrong answers,
# 4 incomplete, 5 a threshold not met, 1 error, 2 usage), else report's
# (5: a --fail-on limit crossed significantly; 2: the runs cannot be
# compared), else 0. The baseline's own verdict never fails the build.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 BASE_RELAY CAND_RELAY OUTDIR" >&2
	exit 2
fi
base_relay=$1
cand_relay=$2
out=$3
rb=${RELAYBENCH:-relaybench}
repeat=${REPEAT:-5}
bench_args=${BENCH_ARGS:---events 5000 --queries 100}
fail_on=${FAIL_ON:-publish.rate:-10% query.rate:-10%}
# One corpus for both builds, whatever the hour.
anchor=2026-01-01T00:00:00Z

mkdir -p "$out" || exit 1
rm -f "$out/base.json" "$out/cand.json" "$out/base.md" "$out/cand.md"

thr_file=
if [ -n "${THRESHOLDS:-}" ]; then
	thr_file="--thresholds=$THRESHOLDS"
fi

echo "== baseline: $base_relay ($repeat runs)" >&2
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
"$rb" compare --relays "$base_relay" --repeat "$repeat" $bench_args --anchor "$anchor" \
	--json "$out/base.json" --out "$out" --no-progress --quiet
base_status=$?
case $base_status in
0 | 3 | 4 | 5) ;; # measured: the baseline's verdict does not gate the candidate
*)
	echo "relaybench-gate: the baseline could not be measured (exit $base_status)" >&2
	exit "$base_status"
	;;
esac

echo "== candidate: $cand_relay ($repeat runs)" >&2
# shellcheck disable=SC2086
"$rb" compare --relays "$cand_relay" --repeat "$repeat" $bench_args --anchor "$anchor" \
	--json "$out/cand.json" --out "$out" --no-progress \
	${thr_file:+"$thr_file"} ${THRESHOLD_ARGS:-} --junit "$out/junit-candidate.xml"
cand_status=$?
if [ ! -s "$out/cand.json" ]; then
	echo "relaybench-gate: the candidate could not be measured (exit $cand_status)" >&2
	exit "$cand_status"
fi

"$rb" report "$out/base.json" "$out/cand.json" -o "$out/report.html" || exit 1

set --
for f in $fail_on; do
	set -- "$@" --fail-on "$f"
done
"$rb" report --base "$out/base.json" --cand "$out/cand.json" "$@" ${thr_file:+"$thr_file"} \
	-f md -o "$out/comparison.md" --junit "$out/junit-fail-on.xml"
gate_status=$?

{
	echo
	echo "Candidate verdict: exit $cand_status; fail-on limits: exit $gate_status (0 passed, 3 wrong answers, 4 incomplete, 5 thresholds or limits failed)."
} >>"$out/comparison.md"

if [ "$cand_status" -ne 0 ]; then
	exit "$cand_status"
fi
exit "$gate_status"
