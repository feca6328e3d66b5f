# Sourced by scripts/gpu/train.sh and finetune.sh, from the repository root, on the device machine: installs
# the carried wheels (.whl/) into /tmp/site unless NO_WHEELS is set (then the python3 on PATH is used as it
# is: how the scripts are tried on the CPU machine), sets PYTHONPATH and NDB, checks that ndb starts and
# prints torch's device. copy_tokenizer DIR [CHECKPOINT] copies a checkpoint's (default: the shipped model's) tokenizer files (only those: the
# checkpoint's model card must not follow) for `ndb train --tokenizer`. setup_sandbox unpacks the carried
# bubblewrap and libseccomp (.gpubin/*.deb) and checks that the oracle's sandbox starts; where the machine
# refuses namespaces even so, runs of our own programs go on with NDB_NO_SANDBOX=1 on that disposable
# machine, and the log says so.
if [ -d .whl ] && [ -z "${NO_WHEELS:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        || { echo "wheel install failed"; exit 3; }
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
NDB=(python3 -m dap_server)
"${NDB[@]}" --help >/dev/null || { echo "ndb does not start here (missing wheels? run scripts/gpu/fetch_wheels.sh)"; exit 3; }
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
CORES=$(nproc)

copy_tokenizer() {  # DIR [CHECKPOINT, default the shipped default]
    local from=${2:-model_backend/checkpoints/default}
    mkdir -p "$1"
    for f in tokenizer.json tokenizer_config.json special_tokens_map.json stats.json; do
        [ -f "$from/$f" ] && cp "$from/$f" "$1/"
    done
}

setup_sandbox() {
    mkdir -p /tmp/gpubin
    for f in .gpubin/*.deb; do dpkg -x "$f" /tmp/gpubin; done
    if [ -x /tmp/gpubin/usr/bin/bwrap ]; then
        export NDB_BWRAP=/tmp/gpubin/usr/bin/bwrap LD_LIBRARY_PATH=/tmp/gpubin/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    fi
    printf 'def f(x):\n    return x + 1\n' > /tmp/probe.py
    if "${NDB[@]}" trace /tmp/probe.py --entry "f(1)" > /tmp/probe.out 2>&1; then echo "sandbox: bubblewrap works here"
    else echo "sandbox: refused here ($(tail -n 1 /tmp/probe.out)); runs go on with NDB_NO_SANDBOX=1"; export NDB_NO_SANDBOX=1; fi
}
