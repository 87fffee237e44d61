#!/usr/bin/env bash
# Runs the cargo-fuzz targets; the same entry point for developers and CI (nightly workflow,
# .ci/run). Targets are the [[bin]] entries of fuzz/Cargo.toml.
#
#   scripts/fuzz.sh list                      the targets
#   scripts/fuzz.sh smoke                     every target for $FUZZ_SECONDS (default 20) seconds,
#                                             seeded from corpus/<target>/ (committed corpora are
#                                             not modified); fails on a crash
#   scripts/fuzz.sh run TARGET [SECONDS]      one target (default 600 s), growing corpus/<target>/
#   scripts/fuzz.sh all [SECONDS]             every target for SECONDS (default 300) each, growing
#                                             corpus/<target>/, then cmin + crashes; fails on a crash
#   scripts/fuzz.sh cmin [TARGET...]          minimise corpus/<target>/ in place (default: all)
#   scripts/fuzz.sh merge TARGET DIR...       merge the inputs of DIRs that add coverage into
#                                             corpus/<target>/
#   scripts/fuzz.sh crashes [TARGET...]       copy fuzz/artifacts/<target>/{crash,timeout,oom,leak}-*
#                                             to $FUZZ_CRASH_DIR/<target>/ and minimise each
#                                             (cargo fuzz tmin) into <name>.min
#   scripts/fuzz.sh tmin TARGET FILE [OUT]    minimise one crashing input (default OUT: FILE.min)
#   scripts/fuzz.sh repro TARGET FILE         run the target once on FILE (debug a crash)
#   scripts/fuzz.sh regress TARGET FILE [NAME]
#                                             minimise FILE and store it as the regression case
#                                             tests/regressions/<target>/<NAME>.bin, replayed by
#                                             `cargo test --test fuzz_regressions`
#
# Environment: FUZZ_SECONDS (smoke), FUZZ_TIMEOUT (libFuzzer -timeout per input, default 10 s),
# FUZZ_RSS_MB (-rss_limit_mb, default 2048), FUZZ_JOBS (parallel jobs per target for
# run/all, default 1), FUZZ_SANITIZER (cargo fuzz --sanitizer, default address),
# FUZZ_CRASH_DIR (default fuzz/crashes), FUZZ_SEED (libFuzzer -seed; smoke defaults to 1, other
# commands to a random seed).
#
# Fuzzing needs the nightly toolchain (the library and tests build on stable): without it this
# prints a NOTICE and exits 0. cargo-fuzz is installed from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

TIMEOUT="${FUZZ_TIMEOUT:-10}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
JOBS="${FUZZ_JOBS:-1}"
CRASH_DIR="${FUZZ_CRASH_DIR:-$ROOT/fuzz/crashes}"
BUILD_FLAGS=(--sanitizer "${FUZZ_SANITIZER:-address}")
STATS_DIR=$(mktemp -d)
trap 'rm -rf "$STATS_DIR"' EXIT

targets() {
  awk '/^\[\[bin\]\]/ { bin = 1; next } /^\[/ { bin = 0 }
       bin && $1 == "name" { gsub(/"/, "", $3); print $3 }' fuzz/Cargo.toml
}

is_target() { targets | grep -x "$1" >/dev/null || { echo "unknown fuzz target: $1 (see: $0 list)" >&2; exit 2; }; }

have_nightly() { rustup toolchain list 2>/dev/null | grep -q '^nightly'; }

need_tools() {
  if ! have_nightly; then
    echo "NOTICE: fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)"
    exit 0
  fi
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
  fi
}

libfuzzer_flags() { # target -> the options every run of it gets
  local dict="$ROOT/fuzz/dict/$1.dict"
  printf '%s\n' "-timeout=$TIMEOUT" "-rss_limit_mb=$RSS_MB" "-print_final_stats=1"
  [ -f "$dict" ] && printf '%s\n' "-dict=$dict"
  [ -n "${FUZZ_SEED:-}" ] && printf '%s\n' "-seed=$FUZZ_SEED"
  return 0
}

# Records executions, coverage and corpus size of one run from its libFuzzer log.
record_stats() { # target log corpus-dir status
  local target=$1 log=$2 corpus=$3 status=$4 execs cov ft units
  execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{ s += $2 } END { print s + 0 }')
  cov=$(grep -ho 'cov: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }')
  ft=$(grep -ho 'ft: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }')
  # libFuzzer's corpus (all corpus dirs, as loaded and grown), else the files of the first dir.
  units=$(grep -ho 'corp: [0-9]*' "$log" | tail -n 1 | awk '{ print $2 }')
  [ -n "$units" ] || units=$(find "$corpus" -type f | wc -l)
  printf '%s %s %s %s %s %s\n' "$target" "${execs:-0}" "${cov:--}" "${ft:--}" "$units" "$status" \
    >>"$STATS_DIR/stats"
}

print_summary() {
  [ -s "$STATS_DIR/stats" ] || return 0
  echo
  echo "=== fuzz summary ==="
  { echo "target executions cov ft corpus status"; cat "$STATS_DIR/stats"; } |
    awk '{ printf "%-20s %12s %8s %8s %8s %s\n", $1, $2, $3, $4, $5, $6 }'
}

# Fuzzes one target; extra arguments are corpus dirs (the first one receives new inputs).
run_target() { # target seconds corpus-dirs...
  local target=$1 seconds=$2; shift 2
  local log status=ok flags=()
  mapfile -t flags < <(libfuzzer_flags "$target")
  [ "$JOBS" -gt 1 ] && flags+=("-fork=$JOBS" "-ignore_crashes=0")
  log="$STATS_DIR/$target.log"
  mkdir -p "fuzz/artifacts/$target"
  echo "--- fuzz $target for ${seconds}s"
  if ! cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$target" "$@" -- \
      -max_total_time="$seconds" "${flags[@]}" >"$log" 2>&1; then
    # What failed, without the stack and the input's byte dump (full log: rerun with repro).
    grep -E -A2 'panicked at|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY:|Test unit written' \
      "$log" | grep -v '^[[:space:]]*\[[0-9, ]*\]$' | cut -c1-400 | head -n 30
    echo "FAIL: fuzz target $target found a crash; inputs are in fuzz/artifacts/$target/"
    status=CRASH
  fi
  grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs)' "$log" | tail -n 1 || true
  record_stats "$target" "$log" "$1" "$status"
  [ "$status" = ok ]
}

cmin_target() { # target
  local target=$1 before after flags=()
  mkdir -p "corpus/$target"
  before=$(find "corpus/$target" -type f | wc -l)
  [ "$before" -gt 0 ] || return 0
  mapfile -t flags < <(libfuzzer_flags "$target" | grep -v print_final_stats)
  if cargo +nightly fuzz cmin "${BUILD_FLAGS[@]}" "$target" "corpus/$target" -- "${flags[@]}" \
      >"$STATS_DIR/$target.cmin.log" 2>&1; then
    after=$(find "corpus/$target" -type f | wc -l)
    echo "cmin $target: $before -> $after inputs"
  else
    tail -n 20 "$STATS_DIR/$target.cmin.log"
    echo "WARNING: cmin of $target failed; corpus/$target left as it was"
  fi
}

# Minimises a crashing input into out (a copy of the input when minimising is not possible).
tmin_input() { # target input out
  local target=$1 input=$2 out=$3 flags=()
  mapfile -t flags < <(libfuzzer_flags "$target" | grep -v print_final_stats)
  if have_nightly && cargo +nightly fuzz tmin "${BUILD_FLAGS[@]}" -r "${FUZZ_TMIN_RUNS:-2000}" \
      "$target" "$input" -- "${flags[@]}" -exact_artifact_path="$out" \
      >"$STATS_DIR/tmin.log" 2>&1 && [ -s "$out" ]; then
    echo "minimised $input ($(wc -c <"$input") bytes) -> $out ($(wc -c <"$out") bytes)"
  else
    [ -s "$out" ] || cp "$input" "$out"
    echo "NOTICE: could not minimise $input (no nightly, or it no longer fails); kept as is: $out"
    tail -n 5 "$STATS_DIR/tmin.log" 2>/dev/null || true
  fi
}

# Copies and minimises the failing inputs of the targets; prints how many there are.
collect_crashes() { # targets...
  local target found=0 file name
  for target in "$@"; do
    for file in fuzz/artifacts/"$target"/{crash,timeout,oom,leak}-*; do
      [ -f "$file" ] || continue
      name=$(basename "$file")
      mkdir -p "$CRASH_DIR/$target"
      cp "$file" "$CRASH_DIR/$target/$name"
      if [ ! -f "$CRASH_DIR/$target/$name.min" ]; then
        tmin_input "$target" "$file" "$CRASH_DIR/$target/$name.min" >&2
      fi
      found=$((found + 1))
    done
  done
  echo "$found"
}

report_crashes() { # targets... ; exit status 1 when there are crashes
  local n
  n=$(collect_crashes "$@")
  if [ "$n" -gt 0 ]; then
    echo
    echo "FAIL: $n crashing input(s), copied and minimised (*.min) into $CRASH_DIR/:"
    find "$CRASH_DIR" -type f | sort | sed 's/^/  /'
    echo "Reproduce: scripts/fuzz.sh repro TARGET FILE; keep as a regression test:"
    echo "  scripts/fuzz.sh regress TARGET FILE NAME"
    return 1
  fi
}

case "${1:-smoke}" in
  list) targets ;;
  smoke)
    need_tools
    seconds="${FUZZ_SECONDS:-20}"
    # A fixed random seed: the smoke run checks this change against the committed corpus and
    # the same mutations every time (exploring is the nightly run's job; set FUZZ_SEED= to vary).
    export FUZZ_SEED="${FUZZ_SEED-1}"
    failed=()
    for t in $(targets); do
      scratch=$(mktemp -d)
      mkdir -p "corpus/$t"
      run_target "$t" "$seconds" "$scratch" "corpus/$t" || failed+=("$t")
      rm -rf "$scratch"
    done
    print_summary
    if [ "${#failed[@]}" -gt 0 ]; then
      report_crashes "${failed[@]}" || true
      exit 1
    fi
    ;;
  run)
    need_tools
    t="${2:?usage: $0 run TARGET [SECONDS]}"
    is_target "$t"
    mkdir -p "corpus/$t"
    status=0
    run_target "$t" "${3:-600}" "corpus/$t" || status=1
    print_summary
    [ "$status" = 0 ] || { report_crashes "$t" || true; exit 1; }
    ;;
  all)
    need_tools
    seconds="${2:-300}"
    all_targets=$(targets)
    failed=0
    for t in $all_targets; do
      mkdir -p "corpus/$t"
      run_target "$t" "$seconds" "corpus/$t" || failed=1
    done
    for t in $all_targets; do cmin_target "$t"; done
    print_summary
    # shellcheck disable=SC2086
    report_crashes $all_targets
    [ "$failed" = 0 ] || { echo "FAIL: a fuzz target failed (see its log above)"; exit 1; }
    ;;
  cmin)
    need_tools
    shift
    [ "$#" -gt 0 ] || set -- $(targets)
    for t in "$@"; do is_target "$t"; cmin_target "$t"; done
    ;;
  merge)
    need_tools
    t="${2:?usage: $0 merge TARGET DIR...}"
    is_target "$t"
    shift 2
    mkdir -p "corpus/$t"
    mapfile -t flags < <(libfuzzer_flags "$t" | grep -v print_final_stats)
    cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$t" "corpus/$t" "$@" -- -merge=1 "${flags[@]}"
    ;;
  crashes)
    shift
    [ "$#" -gt 0 ] || set -- $(targets)
    report_crashes "$@"
    echo "no crashing inputs in fuzz/artifacts/"
    ;;
  tmin)
    need_tools
    t="${2:?usage: $0 tmin TARGET FILE [OUT]}"
    file="${3:?usage: $0 tmin TARGET FILE [OUT]}"
    is_target "$t"
    tmin_input "$t" "$file" "${4:-$file.min}"
    ;;
  repro)
    need_tools
    t="${2:?usage: $0 repro TARGET FILE}"
    file="${3:?usage: $0 repro TARGET FILE}"
    is_target "$t"
    RUST_BACKTRACE=1 cargo +nightly fuzz run "${BUILD_FLAGS[@]}" "$t" "$file" -- \
      "-timeout=$TIMEOUT" "-rss_limit_mb=$RSS_MB"
    ;;
  regress)
    t="${2:?usage: $0 regress TARGET FILE [NAME]}"
    file="${3:?usage: $0 regress TARGET FILE [NAME]}"
    is_target "$t"
    name="${4:-$(basename "$file" | sed 's/\.min$//; s/^\(crash\|timeout\|oom\|leak\)-\(.\{12\}\).*/\1-\2/')}"
    name="${name%.bin}"
    dest="tests/regressions/$t/$name.bin"
    mkdir -p "tests/regressions/$t"
    [ -e "$dest" ] && { echo "$dest exists; pick another NAME" >&2; exit 2; }
    tmin_input "$t" "$file" "$dest"
    echo "stored $dest; replay: cargo test --test fuzz_regressions -- --nocapture"
    echo "(it fails until the bug is fixed; commit it together with the fix)"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2
    exit 2
    ;;
esac
