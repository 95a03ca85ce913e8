#!/usr/bin/env bash
# run.sh reproduces the tables of docs/performance.md: every benchmark of
# this module in one run (so that the ratios compare like with like, the
# fsync included), then benchstat's tables, one per comparison.
#
#   bench/run.sh [OUTDIR]        # COUNT=6 BENCHTIME=300x by default
#
# PostgreSQL and Redis are found as the tests find them
# (IDEMPAY_POSTGRES_DSN, IDEMPAY_REDIS_ADDR); without them their rows are
# skipped. The whole run takes about four minutes on the 2-core machine.
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-$(mktemp -d)}
mkdir -p "$out"
count=${COUNT:-6}
benchtime=${BENCHTIME:-300x}
# The benchstat version the module proxy serves here.
benchstat=(go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da)

{
	echo "# $(date -u +%FT%TZ) $(go version) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
	# A sub-benchmark that fails (a shared server set up so that a store
	# refuses it) must not cost the other tables: say so, and go on.
	go test -run '^$' -bench . -benchmem -count "$count" -benchtime "$benchtime" -timeout 30m . ||
		echo "run.sh: some benchmarks failed; see the FAIL lines above" >&2
} | tee "$out/bench.txt"

table() { # title, filter, benchstat flags...
	echo
	echo "## $1"
	"${benchstat[@]}" -filter "$2" "${@:3}" "$out/bench.txt"
}
{
	table "One charge against the reference server" '.name:Charge' -col /client -row /conc
	table "Stripe create+confirm" '.name:CreatePaymentIntent' -col /client -row /conc
	table "Stores beside the same statements issued directly" '.name:StoreDirect' -col /client -row /db,/conc
	table "fsync of a small file, this run" '.name:Fsync'
} | tee "$out/tables.txt"
echo "raw results: $out/bench.txt; tables: $out/tables.txt" >&2
