package impact

import (
	"fmt"
	"io"
	"strings"
)

// Write prints one block per instance group and returns whether any existing instance would be updated.
func Write(w io.Writer, groups []Group) (bool, error) {
	var b strings.Builder
	updates := false
	for _, g := range groups {
		updates = updates || g.Restarts()
		writeGroup(&b, g)
	}
	_, err := io.WriteString(w, b.String())
	return updates, err
}

func writeGroup(b *strings.Builder, g Group) {
	switch {
	case g.Added:
		fmt.Fprintf(b, "%s: new instance group (%d instances)\n", g.Name, g.Instances[1])
		return
	case g.Removed:
		fmt.Fprintf(b, "%s: instance group removed\n", g.Name)
		return
	case g.Errand && g.Differs():
		fmt.Fprintf(b, "%s: errand, no VM to update; its next run gets these differences\n", g.Name)
	case g.Restarts():
		fmt.Fprintf(b, "%s: existing instances would be updated\n", g.Name)
	default:
		fmt.Fprintf(b, "%s: no change to existing instances\n", g.Name)
	}
	for _, j := range g.Rendered {
		fmt.Fprintf(b, "  %s/%s renders differently: %s\n", Release, j.Job, strings.Join(j.Files, ", "))
	}
	if len(g.Entries) > 0 {
		fmt.Fprintf(b, "  manifest entries differ (other releases, not rendered here): %s\n", strings.Join(g.Entries, ", "))
	}
	if len(g.Listers) > 0 {
		fmt.Fprintf(b, "  jobs that list other instances, while a group changes size: %s\n", strings.Join(g.Listers, ", "))
	}
	if len(g.Variables) > 0 {
		fmt.Fprintf(b, "  uses variables whose definitions differ (new values may be issued): %s\n", strings.Join(g.Variables, ", "))
	}
	if g.Instances[0] != g.Instances[1] {
		fmt.Fprintf(b, "  instances: %d -> %d\n", g.Instances[0], g.Instances[1])
	}
}
