#!/usr/bin/env bash
# A paired run: `bash .ci/run` on a fresh clone of this checkout's HEAD while a second full suite
# (PostgreSQL, `bun test --parallel`) runs beside it on another fresh clone, on the same machine.
# It shows whether any test depends on the machine's pace (issue 28). Prints one line:
#   pair <name> commit <sha>: CI [<N passed, N failed>] second [<pass> <fail> <skip>] wall <s> maxload <l>
#   bash scripts/ci-pair.sh [name]        (logs under ${PAIR_LOGS:-/tmp/pairs})
set -u
name=${1:-1}
repo=$(cd "$(dirname "$0")/.." && pwd)
logs=${PAIR_LOGS:-/tmp/pairs}
a=$(mktemp -d); b=$(mktemp -d)
mkdir -p "$logs"
git clone -q "$repo" "$a"; git clone -q "$repo" "$b"
commit=$(git -C "$a" rev-parse --short HEAD)
start=$(date +%s)
( while true; do uptime >> "$logs/load-$name.txt"; sleep 30; done ) & loadlog=$!
( cd "$b" && bun install --frozen-lockfile >/dev/null 2>&1 \
  && DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}" bun test --parallel --timings=tests/timings.json > "$logs/second-$name.log" 2>&1 ) & second=$!
( cd "$a" && bash .ci/run > "$logs/ci-$name.log" 2>&1 )
wait "$second"
kill "$loadlog" 2>/dev/null
end=$(date +%s)
count() { grep -E "^ *[0-9]+ $1\$" "$logs/second-$name.log" | tail -n 1 | tr -d ' '; }
maxload=$(awk -F'load average: ' '{ split($2, l, ", "); if (l[1] > m) m = l[1] } END { print m }' "$logs/load-$name.txt")
echo "pair $name commit $commit: CI [$(tail -n 1 "$logs/ci-$name.log")] second [$(count pass) $(count fail) $(count skip)] wall $((end - start)) s maxload $maxload"
rm -rf "$a" "$b"
