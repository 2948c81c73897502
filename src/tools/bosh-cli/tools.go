//go:build tools

// Package tools pins the bosh CLI as a dependency of this module so that scripts/build-bosh-cli builds it
// from go.mod and go.sum alone.
package tools

import _ "github.com/cloudfoundry/bosh-cli/v7"
