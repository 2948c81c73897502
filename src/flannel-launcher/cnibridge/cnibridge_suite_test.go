package cnibridge_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCNIBridge(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "CNI Bridge Suite")
}
