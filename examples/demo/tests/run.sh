#!/bin/sh
# The one test: counts of a known input.
set -eu
out=$(printf 'b a b\nc b a\n' | ./wordfreq)
expect=$(printf '      3 b\n      2 a\n      1 c')
[ "$out" = "$expect" ] || { echo "FAIL: got:"; echo "$out"; exit 1; }
echo ok
