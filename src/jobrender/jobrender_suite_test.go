package jobrender_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestJobrender(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Jobrender Suite")
}
