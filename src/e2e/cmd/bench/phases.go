package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
)

// flanneldPhases are the lines flanneld v0.12 logs on its way to the subnet file, in order; a start is taken
// apart by the time of each after flanneld's process started.
var flanneldPhases = []string{
	"Created subnet manager",
	"Found network config",
	"Found lease",
	"Setting up masking rules",
	"Wrote subnet file",
}

const staticLog = "/var/vcap/sys/log/flanneld/" + staticName + ".stderr.log"

// glogLine matches flanneld's log lines: "I1205 18:00:00.123456   1234 main.go:246] message".
var glogLine = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ \S+\] (.*)$`)

// phases is, for each of flanneldPhases, how long after start flanneld logged it in path after offset; zero
// for a line it did not log.
func phases(path string, offset int64, start time.Time) ([]time.Duration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, bosherr.WrapErrorf(err, "Reading flanneld's log")
	}
	if offset > int64(len(data)) {
		offset = 0
	}
	found := make([]time.Duration, len(flanneldPhases))
	for _, line := range strings.Split(string(data[offset:]), "\n") {
		m := glogLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for i, prefix := range flanneldPhases {
			if found[i] != 0 || !strings.HasPrefix(m[2], prefix) {
				continue
			}
			at, err := time.ParseInLocation("0102 15:04:05.000000", m[1], time.Local)
			if err != nil {
				return nil, bosherr.WrapErrorf(err, "Parsing the time of '%s'", line)
			}
			found[i] = at.AddDate(start.Year(), 0, 0).Sub(start)
		}
	}
	return found, nil
}

// launcherSteps are the launcher's log lines on its way to flanneld's start, in order; a start is taken apart by
// the time of the last of each after the launcher's process started (inside bpm's container: runc's init first).
var launcherSteps = []struct{ name, pattern string }{
	{"logged its start", `^starting:`},
	{"resolved the alias", `^'[^']*' resolves to `},
	{"probed the members", `^Member '`},
	{"started flanneld", `^flanneld started:`},
}

// steps is, for each of launcherSteps, how long after start the launcher last logged it in path after offset;
// zero for a line it did not log.
func steps(path string, offset int64, start time.Time) []time.Duration {
	found := make([]time.Duration, len(launcherSteps))
	for i, step := range launcherSteps {
		at, _, err := logMatch(path, offset, regexp.MustCompile(step.pattern))
		if err == nil {
			found[i] = at.Sub(start)
		}
	}
	return found
}

// printPhases prints the median of each phase over the restarts of each variant.
func printPhases(launcher, static []startup) {
	fmt.Println("  flanneld's own log, its process start to each line (median of the restarts): launcher; static")
	for i, prefix := range flanneldPhases {
		phase := func(s startup) time.Duration {
			if i < len(s.phases) {
				return s.phases[i]
			}
			return 0
		}
		fmt.Printf("    %-26s %s; %s\n", prefix, restarts(launcher, phase), restarts(static, phase))
	}
	fmt.Println("  the launcher's own log, its process start to each line (median of the restarts)")
	for i, step := range launcherSteps {
		fmt.Printf("    %-26s %s\n", step.name, restarts(launcher, func(s startup) time.Duration {
			if i < len(s.steps) {
				return s.steps[i]
			}
			return 0
		}))
	}
}
