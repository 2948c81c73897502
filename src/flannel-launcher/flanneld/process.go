package flanneld

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Process is a started flanneld.
type Process interface {
	Pid() int
	Signal(os.Signal) error
	Kill() error
	// Wait returns the exit status: the program's own, or 128 + the signal number when a signal ended it, as a
	// shell reports it.
	Wait() (int, error)
}

// Starter starts a program. Tests inject one that starts a recording stand-in or counts starts.
type Starter interface {
	Start(path string, args []string) (Process, error)
}

// ExecStarter starts the program as a child process with the given output streams. Env nil passes the
// launcher's environment on.
type ExecStarter struct {
	Stdout, Stderr io.Writer
	Env            []string
}

func (s ExecStarter) Start(path string, args []string) (Process, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdout = s.Stdout
	cmd.Stderr = s.Stderr
	cmd.Env = s.Env
	// Should the launcher be killed outright, flanneld is told to stop rather than left behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return execProcess{cmd: cmd}, nil
}

type execProcess struct {
	cmd *exec.Cmd
}

func (p execProcess) Pid() int                   { return p.cmd.Process.Pid }
func (p execProcess) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }
func (p execProcess) Kill() error                { return p.cmd.Process.Kill() }

func (p execProcess) Wait() (int, error) {
	err := p.cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return 1, err
	}
	status := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if status.Signaled() {
		return 128 + int(status.Signal()), nil
	}
	return status.ExitStatus(), nil
}
