// Package boshdns is the director's side of bosh-dns on the simulated cluster: the records.json it pushes to
// every VM after a deploy (its format: record_keys and one row of record_infos per instance, and records, the
// address and BOSH name of each instance, which bosh-dns answers reverse lookups from), and a query asked
// through the bosh-dns of one VM, as a process on that VM would ask it.
package boshdns

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/src/e2e/director"
)

// recordKeys are the columns of the director's records.json, in its order.
var recordKeys = []string{"id", "num_id", "instance_group", "group_ids", "az", "az_id", "network", "network_id",
	"deployment", "ip", "domain", "agent_id", "instance_index"}

// Deployment is what records.json says of the deployment as a whole.
type Deployment struct {
	Name, Network string
	// GroupIDs numbers the instance groups as the director does (for q-g queries), AZIDs the AZs.
	GroupIDs map[string]int
	AZIDs    map[string]int
}

// Records is records.json for instances at version.
func Records(version int, d Deployment, instances []director.Instance) ([]byte, error) {
	sorted := append([]director.Instance(nil), instances...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name() < sorted[j].Name() })
	rows := make([][]any, 0, len(sorted))
	hosts := make([][2]string, 0, len(sorted))
	for n, inst := range sorted {
		group, ok := d.GroupIDs[inst.Group]
		if !ok {
			return nil, bosherr.Errorf("No group id for instance group '%s'", inst.Group)
		}
		rows = append(rows, []any{inst.ID, strconv.Itoa(n + 1), inst.Group, []string{strconv.Itoa(group)}, inst.AZ,
			strconv.Itoa(d.AZIDs[inst.AZ]), d.Network, "1", d.Name, inst.Address, "bosh.", "agent-" + inst.ID, inst.Index})
		hosts = append(hosts, [2]string{inst.Address, fmt.Sprintf("%s.%s.%s.%s.bosh", inst.ID, inst.Group, d.Network, d.Name)})
	}
	content, err := json.Marshal(map[string]any{"version": version, "record_keys": recordKeys, "record_infos": rows,
		"records": hosts, "aliases": map[string]any{}})
	if err != nil {
		return nil, bosherr.WrapError(err, "Writing records.json")
	}
	return content, nil
}
