package regularfile_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRegularfile(t *testing.T) {
	RegisterFailHandler(Fail)
	// generous: two shared cores run several suites at once
	SetDefaultEventuallyTimeout(5 * time.Second)
	RunSpecs(t, "Regularfile Suite")
}
