package pinnedbpm_test

import (
	"os"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPinnedBPM(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: bpm runs containers on network-namespace VMs")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Pinned bpm Suite")
}
