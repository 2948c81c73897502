package scenario

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints one row per step: instances updated with this release and with the kubo-style job,
// each worker's flanneld PID and subnet, and pod probe loss.
func WriteTable(out io.Writer, steps []Step) error {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tUPDATED (flannel-dns)\tUPDATED (kubo-style)\tFLANNELD PIDS\tSUBNETS\tPROBE LOSS")
	for _, s := range steps {
		var pids, subnets []string
		for _, w := range s.Workers {
			pids = append(pids, fmt.Sprintf("%d", w.FlanneldPID))
			lease := ""
			if !w.LeaseInEtcd {
				lease = "(no lease!)"
			}
			subnets = append(subnets, w.Subnet+lease)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, listOrNone(s.Changes.Updated),
			listOrNone(s.Changes.KuboUpdated), strings.Join(pids, " "), strings.Join(subnets, " "), loss(s))
	}
	return tw.Flush()
}

// Progress is the one line printed as a step ends.
func Progress(s Step) string {
	created, deleted := listOrNone(s.Changes.Created), listOrNone(s.Changes.Deleted)
	return fmt.Sprintf("%-30s %5.1fs  created: %s  deleted: %s  updated: %s (kubo-style: %s)  probe loss: %s  bosh-dns right after %.1fs (%d wrong)",
		s.Name, s.Took.Seconds(), created, deleted, listOrNone(s.Changes.Updated), listOrNone(s.Changes.KuboUpdated), loss(s),
		s.DNSSettled.Seconds(), len(s.DNSProblems))
}

func loss(s Step) string {
	if s.Sent == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Lost, s.Sent)
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ",")
}
