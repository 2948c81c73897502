package procstats_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestProcstats(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "procstats")
}
