package sockdiag_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSockdiag(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Sockdiag Suite")
}
