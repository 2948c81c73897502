# Sourced by scripts/demo and scripts/test-e2e: sets the machine up (scripts/setup: apt packages, cached
# builds), adds the vcap user that bpm runs jobs as (a stemcell has it),
# and exports what the harness needs:
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

# The release's compiled packages: scripts/test-release builds the tarball, runs every packaging script
# as a compilation VM does, and links the results under $FLANNEL_DNS_CACHE/packages.
e2e_release_packages() {
  scripts/test-release >&2
  echo "$FLANNEL_DNS_CACHE/packages"
}
