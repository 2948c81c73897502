package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/flannel-dns/flannel-dns/src/flannel-launcher/termtext"
)

// WriteJSON writes the report as one indented JSON document, with every control character escaped.
func (r Report) WriteJSON(w io.Writer) error {
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(r); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(out.Bytes()))
	return err
}

// WriteTable writes the report as sections of aligned columns for a terminal. Every value is escaped (see
// termtext.Escape) before it reaches the layout.
func (r Report) WriteTable(w io.Writer) error {
	var out strings.Builder
	r.writeAlias(&out)
	r.writeServerCerts(&out)
	r.writeMembers(&out)
	r.writeNetworkConfig(&out)
	r.writeVerdict(&out)
	_, err := io.WriteString(w, out.String())
	return err
}

func (r Report) writeAlias(out *strings.Builder) {
	if r.Alias.Error != "" {
		show(out, "ALIAS %s: %s\n\n", r.Alias.Name, r.Alias.Error)
		return
	}
	show(out, "ALIAS %s: %s\n\n", r.Alias.Name, strings.Join(r.Alias.Addresses, ", "))
}

func (r Report) writeServerCerts(out *strings.Builder) {
	table := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "SERVER CERTIFICATE AT\tCOVERS ALIAS\tEXPIRES\tERROR")
	for _, cert := range r.ServerCerts {
		show(table, "%s\t%s\t%s\t%s\n", cert.Address, yesNo(cert.CoversAlias), expiry(cert.NotAfter), dash(cert.Error))
	}
	table.Flush() // writes into a strings.Builder, which does not fail
	out.WriteString("\n")
}

func (r Report) writeMembers(out *strings.Builder) {
	table := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(table, "MEMBER\tCLIENT URL\tRESOLVES\tHEALTHY\tLEADER\tVERSION\tRTT\tERROR")
	for _, m := range r.Members {
		show(table, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.ClientURL, yesNo(m.Resolves), yesNo(m.Healthy),
			yesNo(m.Leader), dash(m.Version), rtt(m), dash(m.Error))
	}
	table.Flush() // writes into a strings.Builder, which does not fail
	out.WriteString("\n")
}

func (r Report) writeNetworkConfig(out *strings.Builder) {
	n := r.NetworkConfig
	show(out, "NETWORK CONFIG %s: %s\n", n.Key, n.State)
	if n.Existing != "" {
		show(out, "  stored:  %s\n", n.Existing)
	}
	show(out, "  desired: %s\n", n.Desired)
	for _, difference := range n.Differences {
		show(out, "  differs: %s\n", difference)
	}
	if n.Error != "" {
		show(out, "  error:   %s\n", n.Error)
	}
	out.WriteString("\n")
}

func (r Report) writeVerdict(out *strings.Builder) {
	if r.Ready {
		out.WriteString("READY: yes, flanneld could start now\n")
	} else {
		out.WriteString("READY: no\n")
	}
	for _, problem := range r.Problems {
		show(out, "  - %s\n", problem)
	}
	for _, warning := range r.Warnings {
		show(out, "WARNING: %s\n", warning)
	}
}

// show writes format with each value escaped; the format's own tabs and newlines lay the report out.
func show(w io.Writer, format string, values ...string) {
	args := make([]any, len(values))
	for i, value := range values {
		args[i] = termtext.Escape(value)
	}
	fmt.Fprintf(w, format, args...)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func expiry(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func rtt(m Member) string {
	if !m.Healthy {
		return "-"
	}
	return fmt.Sprintf("%.1fms", m.RTTMillis)
}
