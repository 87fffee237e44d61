#!/bin/bash -eu
# ClusterFuzzLite/OSS-Fuzz build: compiles every fuzz target of fuzz/Cargo.toml and copies to
# $OUT the binary, its seed corpus (corpus/<target>/ as <target>_seed_corpus.zip) and its
# libFuzzer dictionary (fuzz/dict/<target>.dict as <target>.dict).
#
# Runs in the builder image as $SRC/build.sh with cwd $SRC/chatparse (the Dockerfile's WORKDIR;
# the image sets the sanitizer flags). To check it without Docker, from the repository root:
# OUT=$(mktemp -d) .clusterfuzzlite/build.sh
[ -f fuzz/Cargo.toml ] || cd "$(dirname "$0")/.."

# The builder image pins its nightly in RUSTUP_TOOLCHAIN; elsewhere use the installed nightly.
export RUSTUP_TOOLCHAIN="${RUSTUP_TOOLCHAIN:-nightly}"
cargo fuzz build -O
bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release

for target in $(bash scripts/fuzz.sh list); do
  cp "$bin_dir/$target" "$OUT/$target"
  if [ -d "corpus/$target" ] && [ -n "$(ls -A "corpus/$target")" ]; then
    rm -f "$OUT/${target}_seed_corpus.zip"
    if command -v zip >/dev/null; then
      zip -jq "$OUT/${target}_seed_corpus.zip" "corpus/$target"/*
    else
      python3 -c 'import sys, zipfile, os
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir(sys.argv[2])):
        z.write(os.path.join(sys.argv[2], f), f)' "$OUT/${target}_seed_corpus.zip" "corpus/$target"
    fi
  fi
  if [ -f "fuzz/dict/$target.dict" ]; then
    cp "fuzz/dict/$target.dict" "$OUT/$target.dict"
  fi
done
