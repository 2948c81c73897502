package upgrade_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestUpgrade(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: it creates network namespaces")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Upgrade Suite")
}
