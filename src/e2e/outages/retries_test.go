package outages_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// retry is one "reaching etcd failed, retrying" line of the launcher's log.
type retry struct {
	at      time.Time
	attempt int
	wait    time.Duration // retry_in, rounded to the millisecond by the launcher
	cause   string
	line    string
}

// The launcher logs through bosh-utils with RFC 3339 timestamps in nanoseconds.
var retryLine = regexp.MustCompile(`^\[launch\] (\S+) WARN - reaching etcd failed, retrying: attempt=(\d+) retry_in=(\S+) error='(.*)'$`)

const logTimestamp = "2006-01-02T15:04:05.000000000Z"

// rounding covers retry_in's rounding to the millisecond.
const rounding = time.Millisecond

func parseRetries(log string) ([]retry, error) {
	var retries []retry
	for _, line := range strings.Split(log, "\n") {
		m := retryLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		at, err := time.Parse(logTimestamp, m[1])
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Timestamp of '%s'", line)
		}
		attempt, err := strconv.Atoi(m[2])
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "Attempt of '%s'", line)
		}
		wait, err := time.ParseDuration(m[3])
		if err != nil {
			return nil, bosherr.WrapErrorf(err, "retry_in of '%s'", line)
		}
		retries = append(retries, retry{at: at, attempt: attempt, wait: wait, cause: m[4], line: line})
	}
	return retries, nil
}

// backoff is the launcher's timing.backoff_initial and backoff_max.
type backoff struct {
	initial, max time.Duration
}

func readBackoff(configFile string) (backoff, error) {
	data, err := os.ReadFile(configFile)
	if err != nil {
		return backoff{}, bosherr.WrapErrorf(err, "Reading %s", configFile)
	}
	var cfg struct {
		Timing struct {
			Initial string `json:"backoff_initial"`
			Max     string `json:"backoff_max"`
		} `json:"timing"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return backoff{}, bosherr.WrapErrorf(err, "Parsing %s", configFile)
	}
	var b backoff
	if b.initial, err = time.ParseDuration(cfg.Timing.Initial); err != nil {
		return backoff{}, bosherr.WrapErrorf(err, "timing.backoff_initial in %s", configFile)
	}
	if b.max, err = time.ParseDuration(cfg.Timing.Max); err != nil {
		return backoff{}, bosherr.WrapErrorf(err, "timing.backoff_max in %s", configFile)
	}
	return b, nil
}

// ceiling is the longest wait after attempt n: backoff_initial doubled per attempt, capped at backoff_max.
// The launcher draws each wait between half of it and all of it.
func (b backoff) ceiling(attempt int) time.Duration {
	d := b.initial
	for i := 1; i < attempt && d < b.max; i++ {
		d *= 2
	}
	return min(d, b.max)
}

// violations lists every retry that came sooner than the wait the line before announced, every wait
// outside [ceiling/2, ceiling], and every gap in the attempt numbers.
func (b backoff) violations(retries []retry) []string {
	var found []string
	for i, r := range retries {
		if r.attempt != i+1 {
			found = append(found, fmt.Sprintf("line %d says attempt %d: %s", i+1, r.attempt, r.line))
		}
		ceiling := b.ceiling(r.attempt)
		if r.wait < ceiling/2-rounding || r.wait > ceiling+rounding {
			found = append(found, fmt.Sprintf("attempt %d: retry_in %s is outside [%s, %s]", r.attempt, r.wait, ceiling/2, ceiling))
		}
		if i > 0 {
			gap, announced := r.at.Sub(retries[i-1].at), retries[i-1].wait
			if gap < announced-rounding {
				found = append(found, fmt.Sprintf("attempt %d came %s after attempt %d, which announced %s", r.attempt, gap, r.attempt-1, announced))
			}
		}
	}
	return found
}

func describeRetries(retries []retry, b backoff) string {
	var s strings.Builder
	fmt.Fprintf(&s, "backoff_initial %s, backoff_max %s; attempt, retry_in, time since the previous line:\n", b.initial, b.max)
	for i, r := range retries {
		gap := "-"
		if i > 0 {
			gap = r.at.Sub(retries[i-1].at).Round(time.Millisecond).String()
		}
		fmt.Fprintf(&s, "  %d  %s  %s\n", r.attempt, r.wait, gap)
	}
	if len(retries) > 0 {
		fmt.Fprintf(&s, "first cause: %s\n", retries[0].cause)
	}
	return s.String()
}

var _ = Describe("reading the launcher's retries", func() {
	It("takes the timestamps and waits from the log, and flags a retry sooner than announced", func() {
		log := strings.Join([]string{
			"[launch] 2026-12-02T16:00:00.000000000Z WARN - reaching etcd failed, retrying: attempt=1 retry_in=200ms error='a'",
			"I1202 16:00:00.500000 flanneld line in between",
			"[launch] 2026-12-02T16:00:01.300000000Z WARN - reaching etcd failed, retrying: attempt=2 retry_in=400ms error='b'",
			"[launch] 2026-12-02T16:00:01.500000000Z WARN - reaching etcd failed, retrying: attempt=3 retry_in=2s error='c'",
		}, "\n")
		retries, err := parseRetries(log)
		Expect(err).NotTo(HaveOccurred())
		Expect(retries).To(HaveLen(3))
		Expect(retries[1].wait).To(Equal(400 * time.Millisecond))
		Expect(retries[2].cause).To(Equal("c"))
		Expect(backoff{initial: 250 * time.Millisecond, max: time.Second}.violations(retries)).To(ConsistOf(
			"attempt 3 came 200ms after attempt 2, which announced 400ms",
			"attempt 3: retry_in 2s is outside [500ms, 1s]",
		))
	})
})
