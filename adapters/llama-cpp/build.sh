#!/usr/bin/env bash
# Builds llama-cpp-engine: llama.cpp's chat parser behind chatparse's engine protocol.
#
# llama.cpp comes from a pinned PyPI source distribution that vendors it (xllamacpp), checked
# by its SHA-256; cmake and ninja come from PyPI too. Everything lands in
# adapters/llama-cpp/target/ (git-ignored). Needs a C++17 compiler, python3 and pip.
# Takes about 3 minutes on 2 cores.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/target"
VERSION="2026.10.11549"
SHA256="c17ee1163006f70726abb9f72137830818f3d8cb60bfc34cb232d08428eaa22b"
SDIST="xllamacpp-$VERSION.tar.gz"

mkdir -p "$OUT"
cd "$OUT"

if [ ! -f "$SDIST" ]; then
  python3 -m pip download --quiet --no-deps --no-binary :all: "xllamacpp==$VERSION" -d .
fi
echo "$SHA256  $SDIST" | sha256sum -c --quiet

SRC="$OUT/xllamacpp-$VERSION/thirdparty/llama.cpp"
[ -d "$SRC" ] || tar xzf "$SDIST"

python3 -m pip install --quiet cmake ninja
cmake -S "$SRC" -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF > cmake.log
ninja -C build llama-common

g++ -O2 -std=c++17 -I"$SRC/common" -I"$SRC/include" -I"$SRC/ggml/include" -I"$SRC/vendor" \
  -Ibuild/common "$HERE/engine.cpp" -o llama-cpp-engine \
  build/common/libllama-common.a build/common/libllama-common-base.a build/src/libllama.a \
  build/ggml/src/libggml.a build/ggml/src/libggml-cpu.a build/ggml/src/libggml-base.a \
  build/vendor/cpp-httplib/libcpp-httplib.a -lpthread -fopenmp -ldl
echo "built $OUT/llama-cpp-engine"
