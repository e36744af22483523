#!/bin/sh
# Configure and build warren with warnings as errors.
#   scripts/build.sh [--sanitize|--fuzz] [BUILD_DIR]
# --sanitize: AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)
# --fuzz:     clang + libFuzzer harnesses (build-fuzz); builds only those
set -eu
cd "$(dirname "$0")/.."

mode=release
case "${1:-}" in
--sanitize) mode=asan; shift ;;
--fuzz) mode=fuzz; shift ;;
esac
jobs=$(nproc 2>/dev/null || echo 2)

case $mode in
release)
	dir=${1:-build}
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARREN_WERROR=ON
	cmake --build "$dir" -j "$jobs" ;;
asan)
	dir=${1:-build-asan}
	cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DWARREN_WERROR=ON \
	    -DWARREN_SANITIZE=ON -DWARREN_BENCH=OFF
	cmake --build "$dir" -j "$jobs" ;;
fuzz)
	dir=${1:-build-fuzz}
	CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug \
	    -DWARREN_WERROR=ON -DWARREN_FUZZ=ON -DWARREN_BENCH=OFF
	cmake --build "$dir" -j "$jobs" --target fuzzers ;;
esac
