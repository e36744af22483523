#!/bin/sh
# The main job, on a fresh machine: build warren if needed, then run it on
# the demo workspace. Offline (no WARREN_BASE_URL) the model's side comes
# from the recorded session examples/demo/session.cassette, so you see the
# orchestrator delegate to parallel sandboxed explore agents that run real
# tools on real files. With WARREN_BASE_URL (and a key, e.g. WARREN_API_KEY)
# set, the same task runs against the real model.
#   sh scripts/demo.sh [extra warren run options]
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${WARREN_BUILD_DIR:-$top/build}
if [ ! -x "$build/cli/warren" ] || [ ! -x "$build/worker/warren-worker" ]; then
	echo "demo: building warren in $build" >&2
	cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
	    --target warren warren-worker >/dev/null
fi
task="Explain how this project is structured and list the TODO and FIXME notes left in its code."
ws=$top/examples/demo
export WARREN_WORKER_BIN="$build/worker/warren-worker"
if [ -n "${WARREN_BASE_URL:-}" ]; then
	exec "$build/cli/warren" run --workspace "$ws" "$@" "$task"
fi
echo "demo: no WARREN_BASE_URL set: replaying examples/demo/session.cassette" >&2
exec "$build/cli/warren" run --workspace "$ws" \
    --replay "$ws/session.cassette" "$@" "$task"
