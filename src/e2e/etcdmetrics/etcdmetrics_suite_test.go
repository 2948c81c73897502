package etcdmetrics_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestEtcdmetrics(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "etcdmetrics")
}
