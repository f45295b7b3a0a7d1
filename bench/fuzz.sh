#!/usr/bin/env bash
# Time-boxed fuzzing of every cargo-fuzz target in fuzz/ (nightly toolchain): each target runs
# for FUZZ_SECONDS (default 60, at least 30) starting from its committed corpus. New inputs go
# to a scratch copy, so the committed corpora stay small; crash inputs are kept under
# bench/runs/<date>-<host>/fuzz-artifacts/. Writes bench/summary-fuzz.md, appends to
# raw-fuzz.csv and rewrites docs/benchmarks.md. Usage: bench/fuzz.sh [seconds-per-target]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${1:-${FUZZ_SECONDS:-60}}
if [ "$secs" -lt 30 ]; then
  echo "fuzz.sh: at least 30 s per target (got $secs)" >&2
  exit 2
fi
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

runs="bench/runs/$(date -u +%F)-$(hostname)"
mkdir -p "$runs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The default cargo-fuzz build: optimized, with debug assertions and overflow checks on.
(cd fuzz && cargo +nightly fuzz build >/dev/null)
targets=$(cd fuzz && cargo +nightly fuzz list)
rows=()
total_crashes=0
for t in $targets; do
  seeds=$(find "fuzz/corpus/$t" -type f ! -name '.*' | wc -l)
  mkdir -p "$scratch/$t" "$runs/fuzz-artifacts/$t"
  log="$scratch/$t.log"
  start=$(date +%s)
  set +e
  # -timeout: one input taking over 10 s is a finding (a hang), not a slow machine.
  # -max_len: large enough for the oversize seeds' limits (4 KiB cookies, 16 KiB headers are
  # cut there anyway) without letting HTML inputs grow to the largest seed's 55 KB.
  (cd fuzz && cargo +nightly fuzz run "$t" "$scratch/$t" "corpus/$t" -- \
      -max_total_time="$secs" -max_len=20000 -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$root/$runs/fuzz-artifacts/$t/") >"$log" 2>&1
  rc=$?
  set -e
  elapsed=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  crashes=$(find "$runs/fuzz-artifacts/$t" -type f | wc -l)
  if [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ]; then
    echo "fuzz.sh: $t exited $rc without an artifact; log follows" >&2
    tail -30 "$log" >&2
    crashes="error (exit $rc)"
  fi
  [ "$crashes" = 0 ] || total_crashes=$((total_crashes + 1))
  tail -40 "$log" >"$runs/fuzz-$t.log"
  echo "$(date -u +%FT%TZ),$t,$elapsed,${execs:-0},${rate:-0},$seeds,${corp:-?},${cov:-?},$crashes" >>"$runs/raw-fuzz.csv"
  rows+=("| \`$t\` | $elapsed | ${execs:-0} | ${rate:-0} | $seeds → ${corp:-?} | ${cov:-?} | $crashes |")
  echo "fuzz.sh: $t: ${elapsed}s, ${execs:-0} executions, corpus $seeds → ${corp:-?}, crashes $crashes" >&2
done

{
  echo "## Fuzzing"
  echo
  echo "\`bench/fuzz.sh\` ($(date -u +%F), $(nproc) cores shared with other work, rustc $(rustc +nightly --version | cut -d' ' -f2)):"
  echo "each \`cargo fuzz\` target ran ${secs} s from its committed seed corpus (\`fuzz/corpus/<target>/\`)."
  echo "Corpus is seed files → inputs kept at the end (libFuzzer's count/size); coverage is libFuzzer's"
  echo "edge count. Every crash becomes a regression test and an entry in \`docs/regressions.md\`;"
  echo "the committed corpora are replayed by \`cargo test\` (\`tests/fuzz_replay.rs\`)."
  echo
  echo "| target | seconds | executions | exec/s | corpus | coverage | crashes |"
  echo "|---|---:|---:|---:|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >bench/summary-fuzz.md

python3 -c 'import sys; sys.path.insert(0, "bench"); import run; run.write_doc()'
[ "$total_crashes" -eq 0 ] || { echo "fuzz.sh: $total_crashes target(s) found crashes; see $runs/fuzz-artifacts/" >&2; exit 1; }
