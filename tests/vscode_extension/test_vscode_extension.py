"""The VS Code extension (`vscode-extension/`): its npm build and test suites, run from pytest.

- lint + type check (eslint, tsc), the mocha suites (DebugClient from @vscode/debugadapter-testsupport
  against this repository's Python adapter, plus the extension's own logic), the .vsix package;
- the end-to-end test in a real VS Code (code-server, driven by headless Chromium through
  playwright-core); screenshots in artifacts/vscode-e2e/.

Each test installs what it needs (`npm ci`, then e2e/install.sh: Debian's chromium, Node 24 and
code-server from npm). They are skipped only when npm is missing or the npm registry / Debian's
archive cannot be reached; any other failure fails. Run them alone with `make vscode-test`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXT = REPO / "vscode-extension"
E2E = EXT / "e2e"
VSIX = EXT / "neural-debug.vsix"
ARTIFACTS = REPO / "artifacts" / "vscode-e2e"
STAMP = EXT / "node_modules" / ".ndb-installed"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["NEURAL_DEBUG_PYTHON"] = sys.executable  # the interpreter running the tests imports dap_server
    env.setdefault("CI", "true")
    env["npm_config_update_notifier"] = "false"
    env["npm_config_fund"] = "false"
    env["npm_config_audit"] = "false"
    return env


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    started = time.monotonic()
    try:
        out = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        tail = ((exc.stdout or "") + (exc.stderr or "")) if isinstance(exc.stdout, str) else ""
        pytest.fail(f"{' '.join(cmd)} ran over {timeout:.0f} s:\n{tail[-4000:]}")
    print(f"$ {' '.join(cmd)}  ({time.monotonic() - started:.1f} s)")
    return out


def _output(out: subprocess.CompletedProcess[str]) -> str:
    return (out.stdout + out.stderr)[-6000:]


def _npm_registry_reachable() -> bool:
    try:
        out = subprocess.run(["npm", "ping"], capture_output=True, text=True, timeout=60, env=_env())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def _lock_hash(directory: Path) -> str:
    return hashlib.sha256((directory / "package-lock.json").read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def extension() -> Iterator[Path]:
    """vscode-extension with its node_modules installed by `npm ci` (skipped when the lockfile is unchanged)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed on this machine")
    if not (STAMP.exists() and STAMP.read_text().strip() == _lock_hash(EXT)):
        if not _npm_registry_reachable():
            pytest.skip("the npm registry cannot be reached: the extension's dependencies cannot be installed")
        out = _run(["npm", "ci", "--no-audit", "--no-fund"], EXT, timeout=900)
        assert out.returncode == 0, f"npm ci failed:\n{_output(out)}"
        STAMP.write_text(_lock_hash(EXT))
    yield EXT


@pytest.mark.timeout(600)
def test_lint_and_typecheck(extension: Path) -> None:
    lint = _run(["npm", "run", "lint"], extension, timeout=300)
    assert lint.returncode == 0, f"eslint:\n{_output(lint)}"
    types = _run(["npm", "run", "typecheck"], extension, timeout=300)
    assert types.returncode == 0, f"tsc:\n{_output(types)}"


@pytest.mark.timeout(900)
def test_debugclient_against_the_python_adapter(extension: Path) -> None:
    """mocha: DebugClient launches, breaks, steps in/over/out/back, reads stack/scopes/variables,
    evaluates, sets a variable and runs to the end; plus the extension's configuration logic."""
    out = _run(["npm", "test"], extension, timeout=800)
    text = _output(out)
    print(text)
    assert out.returncode == 0, f"npm test failed:\n{text}"
    assert " passing" in text and " failing" not in text


@pytest.fixture(scope="module")
def vsix(extension: Path) -> Path:
    out = _run(["npm", "run", "package"], extension, timeout=600)
    assert out.returncode == 0, f"vsce package failed:\n{_output(out)}"
    assert VSIX.exists()
    return VSIX


@pytest.mark.timeout(900)
def test_vsix_contents(vsix: Path) -> None:
    names = set(zipfile.ZipFile(vsix).namelist())
    assert {"extension/package.json", "extension/dist/extension.js", "extension.vsixmanifest"} <= names
    assert not any(n.startswith("extension/node_modules/") or n.startswith("extension/src/") for n in names), names


@pytest.mark.timeout(3000)
def test_end_to_end_in_code_server(vsix: Path) -> None:
    """code-server + headless Chromium: gutter breakpoint, "Neural Debug" launch, stop line, Variables
    pane, F10, Debug Console; screenshots in artifacts/vscode-e2e/."""
    stamps_ok = all(
        (d / "node_modules" / ".ndb-installed").exists()
        and (d / "node_modules" / ".ndb-installed").read_text().strip() == _lock_hash(d)
        for d in (E2E / "node24", E2E)
    )
    if not (stamps_ok and Path("/usr/bin/chromium").exists()) and not _npm_registry_reachable():
        pytest.skip("the npm registry cannot be reached: code-server cannot be installed")
    install = _run(["bash", str(E2E / "install.sh")], EXT, timeout=2400)
    text = _output(install)
    if install.returncode != 0 and "apt-get" in text and ("Could not resolve" in text or "Failed to fetch" in text):
        pytest.skip(f"Debian's archive cannot be reached to install chromium:\n{text[-1000:]}")
    assert install.returncode == 0, f"e2e/install.sh failed:\n{text}"
    node24 = install.stdout.strip().splitlines()[-1]
    run = _run([node24, str(E2E / "run.mjs")], EXT, timeout=480)
    report = _output(run)
    print(report)
    assert run.returncode == 0, f"the end-to-end test failed (screenshots in {ARTIFACTS}):\n{report}"
    for shot in ("01-breakpoint-set.png", "02-stopped-at-breakpoint.png", "03-after-step-over.png"):
        assert (ARTIFACTS / shot).stat().st_size > 10_000, shot


def test_the_launch_schema_names_every_launch_argument() -> None:
    """VS Code checks launch.json against package.json's schema: an argument the adapter reads but the
    schema lacks is flagged as not allowed. `python` is the extension's own (which Python runs the adapter),
    as are `adapterPort` and `adapterHost` (an adapter serving over TCP); `adapterToken` is read by the TCP
    transport (dap_server/server.py), not the session."""
    import json

    from dap_server.session import LaunchArguments

    package = json.loads((EXT / "package.json").read_text(encoding="utf-8"))
    (debugger,) = package["contributes"]["debuggers"]
    schema = set(debugger["configurationAttributes"]["launch"]["properties"])
    assert schema == set(LaunchArguments.model_fields) | {"python", "adapterPort", "adapterHost", "adapterToken"}
