// Package boshdns computes the answers bosh-dns would give for a deployment: each instance's own name and
// every alias that a rendered job declares in dns/aliases.json, resolved against the instances deployed now.
package boshdns

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"

	"github.com/flannel-dns/flannel-dns/e2e/director"
	"github.com/flannel-dns/flannel-dns/e2e/dnsmasq"
)

// aliasesFile is where a job's bosh-dns aliases render (bosh-dns reads dns/aliases.json of every job).
const aliasesFile = "dns/aliases.json"

var instanceIndexQuery = regexp.MustCompile(`^q-(?:.*[^a-z])?i(\d+)`)

// Records answers what bosh-dns would: each instance under <id>.<group>.<network>.<deployment>.bosh,
// and every alias that a rendered job declares, its targets resolved against the instances now deployed.
func Records(plan *director.Plan, network, deployment string) (dnsmasq.Records, error) {
	recs := dnsmasq.Records{}
	var instances []director.Instance
	aliases := map[string][]string{}
	for _, rendered := range plan.Rendered {
		inst := rendered.Instance
		instances = append(instances, inst)
		recs[fmt.Sprintf("%s.%s.%s.%s.bosh", inst.ID, inst.Group, network, deployment)] = []string{inst.Address}
		for job, files := range rendered.Jobs {
			content, ok := files[aliasesFile]
			if !ok {
				continue
			}
			var declared map[string][]string
			if err := json.Unmarshal([]byte(content), &declared); err != nil {
				return nil, bosherr.WrapErrorf(err, "Parsing %s of job %s", aliasesFile, job)
			}
			for alias, targets := range declared {
				aliases[alias] = appendNew(aliases[alias], targets...)
			}
		}
	}
	for alias, targets := range aliases {
		for _, target := range targets {
			addrs, err := resolveTarget(target, instances, network, deployment)
			if err != nil {
				return nil, bosherr.WrapErrorf(err, "Alias %s", alias)
			}
			if len(addrs) > 0 {
				recs[alias] = appendNew(recs[alias], addrs...)
			}
		}
	}
	return recs, nil
}

// resolveTarget answers a bosh-dns target: "*" or "q-..." (a group query, q-iN picks instance index N)
// or an instance ID, followed by <group>.<network>.<deployment>.bosh.
func resolveTarget(target string, instances []director.Instance, network, deployment string) ([]string, error) {
	first, rest, _ := strings.Cut(target, ".")
	group, ok := strings.CutSuffix(rest, fmt.Sprintf(".%s.%s.bosh", network, deployment))
	if !ok {
		return nil, bosherr.Errorf("target '%s' is not under .%s.%s.bosh", target, network, deployment)
	}
	index := -1
	if m := instanceIndexQuery.FindStringSubmatch(first); m != nil {
		index, _ = strconv.Atoi(m[1])
	}
	var addrs []string
	for _, inst := range instances {
		if inst.Group != group {
			continue
		}
		switch {
		case first == "*", strings.HasPrefix(first, "q-") && (index < 0 || index == inst.Index), first == inst.ID:
			addrs = append(addrs, inst.Address)
		}
	}
	return addrs, nil
}

func appendNew(list []string, items ...string) []string {
	for _, item := range items {
		found := false
		for _, have := range list {
			found = found || have == item
		}
		if !found {
			list = append(list, item)
		}
	}
	return list
}
