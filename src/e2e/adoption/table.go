package adoption

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the rehearsal: each node's subnet at the start, then one row per step.
func WriteTable(out io.Writer, res Result) error {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "subnets on kubo:\t%s\n", subnetList(res.Start.Subnets))
	fmt.Fprintln(tw, "STEP\tTOOK\tLOSS kubo-kubo\tLOSS kubo-flannel-dns\tLOSS flannel-dns-flannel-dns\tSUBNETS CHANGED\tCLAIMED TWICE\tLEASES v2/v3\tUPDATED")
	for _, s := range append(append([]Step{res.Start}, res.Roll...), res.Scale) {
		if s.Name == "" {
			continue
		}
		fmt.Fprintf(tw, "%s\t%.0fs\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n", s.Name, s.Took.Seconds(), loss(s, KuboKubo),
			loss(s, KuboFlannelDNS), loss(s, FlannelDNSFlannelDNS), orNone(Changed(res.Start, s)), orNone(s.Claims),
			len(s.V2), len(s.V3), orNone(s.Updated))
	}
	fmt.Fprintf(tw, "last probe lost after the last worker's update:\t%.1fs\n", res.Converged.Seconds())
	return tw.Flush()
}

// Progress is the line printed as a step ends.
func Progress(s Step) string {
	var losses []string
	for _, p := range Pairs {
		losses = append(losses, fmt.Sprintf("%s %s", p, loss(s, p)))
	}
	return fmt.Sprintf("%-28s %4.0fs  loss: %s  subnets: %s  leases v2/v3: %d/%d  claimed twice: %s",
		s.Name, s.Took.Seconds(), strings.Join(losses, ", "), subnetList(s.Subnets), len(s.V2), len(s.V3), orNone(s.Claims))
}

// Changed lists the nodes whose subnet after s differs from the one they had at start (a node that was not
// there at the start is not listed).
func Changed(start, s Step) []string {
	var out []string
	for name, was := range start.Subnets {
		if now, ok := s.Subnets[name]; ok && now != was {
			out = append(out, fmt.Sprintf("%s %s -> %s", name, was, now))
		}
	}
	slices.Sort(out)
	return out
}

func loss(s Step, p Pair) string {
	c, ok := s.Loss[p]
	if !ok || c.Sent == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Lost, c.Sent)
}

func subnetList(subnets map[string]string) string {
	var out []string
	for name, s := range subnets {
		out = append(out, name+" "+s)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, "; ")
}
