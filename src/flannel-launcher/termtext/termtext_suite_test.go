package termtext_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTermtext(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Termtext Suite")
}
