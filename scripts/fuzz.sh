#!/bin/sh
# Run every libFuzzer harness for a bounded time on a copy of its seed
# corpus and print the executions it reached.
#   scripts/fuzz.sh [SECONDS_EACH] [BUILD_DIR]
# A crash leaves its input in BUILD_DIR/fuzz-artifacts/ and fails the run.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
dir=${2:-build-fuzz}
status=0
mkdir -p "$dir/fuzz-artifacts"
for bin in "$dir"/tests/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	seeds=tests/fuzz/corpus/${name#fuzz_}
	work=$(mktemp -d)
	[ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
	log="$dir/fuzz-artifacts/$name.log"
	if "$bin" -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=2048 \
	    -artifact_prefix="$dir/fuzz-artifacts/$name-" "$work" >"$log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "fuzz: $name: clean, $execs executions in ${secs}s"
	else
		echo "fuzz: $name: FAILED (see $log)"
		tail -40 "$log"
		status=1
	fi
	rm -rf "$work"
done
exit $status
