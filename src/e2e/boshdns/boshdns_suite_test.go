package boshdns_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestBoshdns(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Boshdns Suite")
}
