package scenario

import (
	"fmt"
	"strings"
)

// Violations lists every pass criterion that the steps break: a worker updated in a master step, a
// flanneld PID or subnet that changed, a lease missing from etcd, probe loss (or no probing) in a master step,
// a bosh-dns answer that breaks what the aliases promise.
func Violations(steps []Step) []string {
	var v []string
	first := map[string]WorkerState{}
	for _, s := range steps {
		for _, p := range s.DNSProblems {
			v = append(v, fmt.Sprintf("%s: %s", s.Name, p))
		}
		for _, name := range s.Changes.Updated {
			if s.MasterStep && strings.HasPrefix(name, "worker/") {
				v = append(v, fmt.Sprintf("%s: %s was updated", s.Name, name))
			}
		}
		if s.MasterStep && (s.Sent == 0 || s.Lost > 0) {
			v = append(v, fmt.Sprintf("%s: pod probe lost %d of %d", s.Name, s.Lost, s.Sent))
		}
		for _, w := range s.Workers {
			v = append(v, workerViolations(s.Name, w, first)...)
		}
	}
	return v
}

func workerViolations(step string, w WorkerState, first map[string]WorkerState) []string {
	var v []string
	if w.FlanneldPID == 0 {
		v = append(v, fmt.Sprintf("%s: %s has no flanneld", step, w.Name))
	}
	if !w.LeaseInEtcd {
		v = append(v, fmt.Sprintf("%s: %s's lease %s is not in etcd", step, w.Name, w.Subnet))
	}
	was, seen := first[w.Name]
	if !seen {
		first[w.Name] = w
		return v
	}
	if w.FlanneldPID != was.FlanneldPID {
		v = append(v, fmt.Sprintf("%s: %s's flanneld PID changed from %d to %d", step, w.Name, was.FlanneldPID, w.FlanneldPID))
	}
	if w.Subnet != was.Subnet {
		v = append(v, fmt.Sprintf("%s: %s's subnet changed from %s to %s", step, w.Name, was.Subnet, w.Subnet))
	}
	return v
}

// KuboContrast lists the master steps in which some worker would not have been updated with the
// kubo-style job (the contrast expects every worker updated at every master step).
func KuboContrast(steps []Step) []string {
	var v []string
	for _, s := range steps {
		if !s.MasterStep {
			continue
		}
		for _, w := range s.Workers {
			if !contains(s.Changes.KuboUpdated, w.Name) {
				v = append(v, fmt.Sprintf("%s: kubo-style %s would not be updated", s.Name, w.Name))
			}
		}
	}
	return v
}

func contains(list []string, item string) bool {
	for _, s := range list {
		if s == item {
			return true
		}
	}
	return false
}
