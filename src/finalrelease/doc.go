// Package finalrelease checks that the final release the README names is the one an operator should get: the
// newest in releases/flannel-dns/index.yml, rebuildable offline from the committed archives, and either built
// from what main builds or described in the README as cut from an older commit.
package finalrelease
