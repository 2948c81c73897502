# Sourced by scripts/demo and scripts/test-e2e: sets the machine up (scripts/setup: apt packages, cached
# builds), adds the vcap user that the flanneld job's pre-start hands /run/flannel to (a stemcell has it),
# and exports what the harness needs:
#   E2E_ETCD_BIN  etcd and etcdctl 3.6.16 (scripts/build-etcd)
#   E2E_PACKAGES  this release's packages, compiled by running their packaging scripts (scripts/test-release)
# shellcheck shell=bash

e2e_prepare() {
  if [ "$(id -u)" != 0 ]; then
    echo "needs root: the simulated VMs are network namespaces" >&2
    return 1
  fi
  scripts/setup
  export FLANNEL_DNS_CACHE=${FLANNEL_DNS_CACHE:-/var/cache/flannel-dns}
  getent passwd vcap >/dev/null || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin vcap
  scripts/build-etcd
  export E2E_ETCD_BIN="$FLANNEL_DNS_CACHE/etcd-3.6.16"
  if [ -z "${E2E_PACKAGES:-}" ]; then
    E2E_PACKAGES=$(e2e_release_packages)
    export E2E_PACKAGES
  fi
  for binary in flannel/bin/flanneld flannel-launcher/bin/flannel-launcher; do
    if [ ! -x "$E2E_PACKAGES/$binary" ]; then
      echo "no $binary under E2E_PACKAGES=$E2E_PACKAGES" >&2
      return 1
    fi
  done
}

# The release's compiled packages: scripts/test-release builds the tarball and runs every packaging script.
e2e_release_packages() {
  if [ -x scripts/test-release ]; then
    scripts/test-release >&2
    echo "$FLANNEL_DNS_CACHE/compiled-packages"
    return
  fi
  echo "WARNING: no scripts/test-release yet: using development builds, not the release's packages" >&2
  e2e_dev_packages
}

# Development builds laid out as compiled packages: the launcher from src/ (vendored), flanneld v0.28.10
# from the module proxy with the tencentvpc backend left out (its module is not served).
e2e_dev_packages() {
  local out="$FLANNEL_DNS_CACHE/dev/packages" src="$FLANNEL_DNS_CACHE/dev/flannel-src"
  mkdir -p "$out/flannel/bin" "$out/flannel-launcher/bin"
  GOWORK=off GOFLAGS=-mod=vendor go build -C src/flannel-launcher -o "$out/flannel-launcher/bin/flannel-launcher" ./cmd/flannel-launcher >&2
  if [ ! -x "$out/flannel/bin/flanneld" ]; then
    local dir
    dir=$(cd /tmp && GOWORK=off GOFLAGS=-mod=mod go mod download -json github.com/flannel-io/flannel@v0.28.10 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src"
    sed -i '/pkg\/backend\/tencentvpc"/d' "$src/main.go"
    (cd "$src" && GOWORK=off GOFLAGS=-mod=mod go build -trimpath -o "$out/flannel/bin/flanneld" .) >&2
  fi
  echo "$out"
}
