// Package testlog gives specs a bosh-utils logger whose lines go to GinkgoWriter (shown when a spec fails)
// and to a buffer that specs can match with gbytes.Say.
package testlog

import (
	"io"

	boshlog "github.com/cloudfoundry/bosh-utils/logger"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega/gbytes"
)

// New logs at debug level.
func New() (boshlog.Logger, *gbytes.Buffer) {
	buffer := gbytes.NewBuffer()
	return boshlog.NewWriterLogger(boshlog.LevelDebug, io.MultiWriter(buffer, ginkgo.GinkgoWriter)), buffer
}
