#!/usr/bin/env bash
# Runs the cargo-fuzz targets; the same entry point for developers and CI.
#
#   scripts/fuzz.sh smoke            every target for $FUZZ_SECONDS (default 20) seconds, seeded
#                                    from corpus/<target>/ (the committed corpus is not modified)
#   scripts/fuzz.sh run TARGET [S]   one target for S seconds (default 600), growing corpus/<target>/
#   scripts/fuzz.sh list             the targets
#
# Fuzzing needs the nightly toolchain (the library and tests build on stable). cargo-fuzz is
# installed from crates.io when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

targets() { sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^chatparse-fuzz$'; }

need_tools() {
  if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "NOTICE: fuzzing skipped: no nightly toolchain (rustup toolchain install nightly)"
    exit 0
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
  fi
}

run_target() { # target seconds corpus-dirs...
  local target=$1 seconds=$2; shift 2
  echo "--- fuzz $target for ${seconds}s"
  local log dict=()
  log=$(mktemp)
  [ -f "fuzz/dict/$target.dict" ] && dict=(-dict="fuzz/dict/$target.dict")
  if ! cargo +nightly fuzz run "$target" "$@" -- -max_total_time="$seconds" \
      "${dict[@]}" -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz target $target failed; crash inputs are in fuzz/artifacts/$target/"
    return 1
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)|cov: ' "$log" | tail -n 3
}

case "${1:-smoke}" in
  list) targets ;;
  smoke)
    need_tools
    seconds="${FUZZ_SECONDS:-20}"
    for t in $(targets); do
      scratch=$(mktemp -d)
      mkdir -p "corpus/$t"
      run_target "$t" "$seconds" "$scratch" "corpus/$t"
      rm -rf "$scratch"
    done
    ;;
  run)
    need_tools
    t="${2:?target}"
    mkdir -p "corpus/$t"
    run_target "$t" "${3:-600}" "corpus/$t"
    ;;
  *) echo "usage: scripts/fuzz.sh smoke|run TARGET [SECONDS]|list" >&2; exit 2 ;;
esac
