// Package monit reads a job's rendered monit file the way monit does for the BOSH agent: the processes it
// checks, each with its pidfile and the programs that start and stop it.
package monit

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/google/shlex"
)

// Process is one `check process` entry.
type Process struct {
	Name    string
	PIDFile string
	Start   []string // the start program's arguments, as monit runs them (no shell)
	Stop    []string
}

// Parse reads the `check process` entries of a monit file; anything else in it (group, depends on,
// if-conditions) is left to monit. A job without processes (an empty file) has none.
func Parse(content []byte) ([]Process, error) {
	words, err := shlex.Split(string(content))
	if err != nil {
		return nil, bosherr.WrapError(err, "Splitting the monit file into words")
	}
	var procs []Process
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == "check" && next(words, i) == "process":
			if i+2 >= len(words) {
				return nil, bosherr.Error("'check process' without a name")
			}
			procs = append(procs, Process{Name: words[i+2]})
			i += 2
		case len(procs) == 0:
		case words[i] == "pidfile":
			procs[len(procs)-1].PIDFile = next(words, i)
			i++
		case words[i] == "matching":
			return nil, bosherr.Errorf("Process '%s' is checked by matching, not by a pidfile", procs[len(procs)-1].Name)
		case (words[i] == "start" || words[i] == "stop") && next(words, i) == "program":
			at := i + 2
			if next(words, i+1) == "=" { // the older `start program = "..."`
				at++
			}
			program, err := shlex.Split(next(words, at-1))
			if err != nil || len(program) == 0 {
				return nil, bosherr.Errorf("Process '%s': %s program '%s' is not a command", procs[len(procs)-1].Name, words[i], next(words, at-1))
			}
			if words[i] == "start" {
				procs[len(procs)-1].Start = program
			} else {
				procs[len(procs)-1].Stop = program
			}
			i = at
		}
	}
	for _, p := range procs {
		if p.PIDFile == "" || p.Start == nil || p.Stop == nil {
			return nil, bosherr.Errorf("Process '%s' lacks a pidfile, a start program or a stop program", p.Name)
		}
	}
	return procs, nil
}

func next(words []string, i int) string {
	if i+1 < len(words) {
		return words[i+1]
	}
	return ""
}

// PID is the process that p's pidfile names (pidfile is where that file is on the host), 0 when monit would
// call p not running: no pidfile, or no such process.
func PID(pidfile string) int {
	data, err := os.ReadFile(pidfile)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}
