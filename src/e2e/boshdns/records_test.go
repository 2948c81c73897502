package boshdns_test

import (
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/flannel-dns/flannel-dns/src/e2e/boshdns"
	"github.com/flannel-dns/flannel-dns/src/e2e/director"
)

var _ = Describe("Records", func() {
	deployment := boshdns.Deployment{Name: "cfcr", Network: "default", GroupIDs: map[string]int{"master": 2, "worker": 3},
		AZIDs: map[string]int{"z1": 1, "z2": 2}}
	instances := []director.Instance{
		{Group: "worker", Index: 0, ID: "w0", Address: "192.0.2.100", AZ: "z1"},
		{Group: "master", Index: 2, ID: "m2", Address: "192.0.2.12", AZ: "z2"},
	}

	It("writes one row per instance under the director's record_keys, and each instance's BOSH name", func() {
		content, err := boshdns.Records(7, deployment, instances)
		Expect(err).NotTo(HaveOccurred())
		var records struct {
			Version int              `json:"version"`
			Keys    []string         `json:"record_keys"`
			Infos   [][]any          `json:"record_infos"`
			Hosts   [][2]string      `json:"records"`
			Aliases map[string][]any `json:"aliases"`
		}
		Expect(json.Unmarshal(content, &records)).To(Succeed())
		Expect(records.Version).To(Equal(7))
		Expect(records.Infos).To(HaveLen(2))
		row := map[string]any{}
		for i, key := range records.Keys {
			row[key] = records.Infos[0][i]
		}
		Expect(row).To(Equal(map[string]any{"id": "m2", "num_id": "1", "instance_group": "master", "group_ids": []any{"2"},
			"az": "z2", "az_id": "2", "network": "default", "network_id": "1", "deployment": "cfcr", "ip": "192.0.2.12",
			"domain": "bosh.", "agent_id": "agent-m2", "instance_index": float64(2)}))
		Expect(records.Hosts).To(ConsistOf([2]string{"192.0.2.12", "m2.master.default.cfcr.bosh"},
			[2]string{"192.0.2.100", "w0.worker.default.cfcr.bosh"}))
	})

	It("refuses an instance of a group without an id", func() {
		_, err := boshdns.Records(1, deployment, []director.Instance{{Group: "errand", ID: "e0", Address: "192.0.2.200"}})
		Expect(err).To(MatchError(ContainSubstring("'errand'")))
	})
})
