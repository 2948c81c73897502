package finalrelease_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFinalrelease(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Finalrelease Suite")
}
