package upgrade

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the rehearsal: each node's subnet and launcher version at the start, then one row per step.
func WriteTable(out io.Writer, res Result) error {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "on the final release:\t%s\n", listed(res.Start.Subnets))
	fmt.Fprintf(tw, "launchers:\t%s\n", listed(res.Start.Versions))
	fmt.Fprintln(tw, "STEP\tTOOK\tLOSS OTHER WORKERS\tNEW PODS REACH OTHERS\tSUBNETS CHANGED\tLAUNCHER")
	for _, s := range res.Roll {
		fmt.Fprintf(tw, "%s\t%.0fs\t%d/%d\t%s\t%s\t%s\n", s.Name, s.Took.Seconds(), s.Others.Lost, s.Others.Sent,
			reach(s), orNone(Changed(res.Start, s)), s.Versions[strings.TrimPrefix(s.Name, "update ")])
	}
	return tw.Flush()
}

// Progress is the line printed as a step ends.
func Progress(s Step) string {
	return fmt.Sprintf("%-26s %4.0fs  loss among other workers' pods: %d/%d  new pods reach others: %s  subnets: %s",
		s.Name, s.Took.Seconds(), s.Others.Lost, s.Others.Sent, reach(s), listed(s.Subnets))
}

// Changed lists the nodes whose subnet after s differs from the one they had at start.
func Changed(start, s Step) []string {
	var out []string
	for name, was := range start.Subnets {
		if now := s.Subnets[name]; now != was {
			out = append(out, fmt.Sprintf("%s %s -> %s", name, was, now))
		}
	}
	slices.Sort(out)
	return out
}

func reach(s Step) string {
	switch {
	case !strings.HasPrefix(s.Name, "update worker/"):
		return "-"
	case !s.Reached:
		return "never"
	}
	return fmt.Sprintf("%.1fs", s.Reach.Seconds())
}

func listed(m map[string]string) string {
	var out []string
	for name, v := range m {
		out = append(out, name+" "+v)
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
