// Package record is what src/testenv/recordingflanneld writes and what tests read back.
package record

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Env vars that steer recordingflanneld. The launcher passes its environment on to flanneld, so a test sets
// them on the launcher's process.
const (
	FileEnv         = "RECORDING_FLANNELD_FILE"          // where the record goes (required)
	ExitEnv         = "RECORDING_FLANNELD_EXIT"          // exit at once with this status
	SignalExitEnv   = "RECORDING_FLANNELD_SIGNAL_EXIT"   // status to exit with after SIGTERM/SIGINT (default 0)
	IgnoreSignalEnv = "RECORDING_FLANNELD_IGNORE_SIGNAL" // "true": record the signal but keep running
	DialEnv         = "RECORDING_FLANNELD_DIAL"          // host:port to connect to and hold, as flanneld holds etcd
	SubnetFileEnv   = "RECORDING_FLANNELD_SUBNET_FILE"   // write this to -subnet-file, as flanneld writes its subnet file
)

type Record struct {
	Started int64    `json:"started_unix_nano"` // when main began, for measuring how long the launcher took
	Args    []string `json:"args"`
	Env     []string `json:"env"`
	PID     int      `json:"pid"`
	Signals []string `json:"signals"`
}

// Write replaces the file in one step so that a reader never sees half a record.
func Write(path string, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return Replace(path, data)
}

// Replace writes a new file and renames it over path, as flanneld writes its subnet file.
func Replace(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".record-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func Read(path string) (Record, error) {
	var r Record
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	err = json.Unmarshal(data, &r)
	return r, err
}

// Flag returns the value given to a "-name=value" or "-name value" argument and whether it was there.
func (r Record) Flag(name string) (string, bool) {
	for i, arg := range r.Args {
		if arg == "-"+name && i+1 < len(r.Args) {
			return r.Args[i+1], true
		}
		if len(arg) > len(name)+2 && arg[:len(name)+2] == "-"+name+"=" {
			return arg[len(name)+2:], true
		}
	}
	return "", false
}
