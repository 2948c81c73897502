// Command podnet is what a container runtime does for kubelet with CNI, for one pod sandbox: run on a worker
// VM (in its namespaces), it adds the sandbox to the loopback and the default network, printing the default
// network's result as JSON, or deletes it from both.
//
//	podnet add|del --id ID --netns PATH --pod NAME [--ports JSON] [--conf-dir DIR] --bin-dir DIR[:DIR...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	current "github.com/containernetworking/cni/pkg/types/100"

	"github.com/flannel-dns/flannel-dns/src/e2e/cni/podnet"
)

// timeout bounds one command, as kubelet bounds its CNI calls.
const timeout = 2 * time.Minute

func main() { os.Exit(mainExitCode()) }

func mainExitCode() int {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "podnet: %s\n", err)
		return 1
	}
	return 0
}

func run(args []string) error {
	if len(args) == 0 || (args[0] != "add" && args[0] != "del") {
		return bosherr.Error("usage: podnet add|del --id ID --netns PATH --pod NAME [--ports JSON] --bin-dir DIR")
	}
	flags := flag.NewFlagSet("podnet "+args[0], flag.ContinueOnError)
	var s podnet.Sandbox
	var ports, confDir, binDir string
	flags.StringVar(&s.ID, "id", "", "the sandbox's container ID")
	flags.StringVar(&s.NetNS, "netns", "", "the sandbox's network namespace")
	flags.StringVar(&s.PodName, "pod", "", "the pod's name")
	flags.StringVar(&s.PodNamespace, "namespace", "default", "the pod's Kubernetes namespace")
	flags.StringVar(&ports, "ports", "", "the pod's hostPorts as JSON: [{\"hostPort\":..., \"containerPort\":..., \"protocol\":\"udp\"}]")
	flags.StringVar(&confDir, "conf-dir", "/etc/cni/net.d", "kubelet's CNI config directory")
	flags.StringVar(&binDir, "bin-dir", "", "kubelet's CNI plugin directories (CNI_PATH)")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}
	// A dead sandbox has no network namespace left: kubelet deletes it with none.
	if s.ID == "" || (s.NetNS == "" && args[0] == "add") || s.PodName == "" || binDir == "" {
		return bosherr.Error("--id, --netns (for add), --pod and --bin-dir are required")
	}
	if ports != "" {
		if err := json.Unmarshal([]byte(ports), &s.PortMappings); err != nil {
			return bosherr.WrapErrorf(err, "Parsing --ports '%s'", ports)
		}
	}
	networks, err := podnet.Load(confDir, filepath.SplitList(binDir))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if args[0] == "del" {
		return networks.Teardown(ctx, s)
	}
	result, err := networks.Setup(ctx, s)
	if err != nil {
		// As kubelet does: release what the plugins that succeeded took (an address, a veth).
		_ = networks.Teardown(ctx, s)
		return err
	}
	converted, err := current.NewResultFromResult(result)
	if err != nil {
		return bosherr.WrapError(err, "Converting the result")
	}
	return json.NewEncoder(os.Stdout).Encode(converted)
}
