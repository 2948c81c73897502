package impact_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestImpact(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Impact Suite")
}
