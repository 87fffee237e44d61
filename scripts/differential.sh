#!/usr/bin/env bash
# Differential run on templates no fixture holds: scaffolds one fixture folder per template of
# DIR (`chatparse new`: the sample messages the template renders, each rendered as a model
# output), then runs that corpus one shot and streamed through chatparse and every engine given
# (the README, "Testing another parser"), side by side.
#
#   scripts/differential.sh DIR [ENGINE...]
#   scripts/differential.sh ../shared/templates-extra llama.cpp=adapters/llama-cpp/target/llama-cpp-engine
#
# The corpus goes to target/differential/<name of DIR>/ (rebuilt on every run); the table,
# report.json and report.html to target/differential/<name of DIR>-report/. A template whose
# samples the scaffold cannot render is left out (listed on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
  echo "usage: scripts/differential.sh DIR [ENGINE...]" >&2
  exit 2
fi
dir="$1"
shift
name="$(basename "$(cd "$dir" && pwd)")"
corpus="target/differential/$name"
cargo build --release --quiet
bin=target/release/chatparse
rm -rf "$corpus"
mkdir -p "$corpus"
for t in "$dir"/*.jinja; do
  [ -e "$t" ] || continue
  model="$(basename "$t" .jinja | tr -c 'A-Za-z0-9._\n-' '_')"
  if ! "$bin" new --dir "$corpus" --template "$t" "$model" > /dev/null 2>&1 \
    || ! ls "$corpus/$model"/*.txt > /dev/null 2>&1; then
    rm -rf "${corpus:?}/$model"
    echo "left out (no sample renders): $t" >&2
  fi
done
engines=(--engine chatparse)
for e in "$@"; do
  engines+=(--engine "$e")
done
# The committed stream regressions belong to the fixture corpus: none are replayed here.
mkdir -p target/differential/no-regressions
"$bin" check "$corpus" "${engines[@]}" --out "target/differential/$name-report" \
  --regressions target/differential/no-regressions
