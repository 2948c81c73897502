package podnet_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPodnet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Podnet Suite")
}
