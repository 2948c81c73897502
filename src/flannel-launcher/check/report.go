// Package check builds the operator's report: what the alias answers, each etcd member as this VM sees it,
// the server certificate, the network config, and whether flanneld could start now.
package check

import "time"

// Report is what `flannel-launcher check` prints, as a table or as JSON.
type Report struct {
	Alias         Alias         `json:"alias"`
	ServerCerts   []ServerCert  `json:"server_certificates"`
	Members       []Member      `json:"members"`
	NetworkConfig NetworkConfig `json:"network_config"`
	Ready         bool          `json:"ready"`
	Problems      []string      `json:"problems"` // why it is not ready; empty when ready
	Warnings      []string      `json:"warnings"` // what the operator should know that does not stop flanneld
}

type Alias struct {
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	Error     string   `json:"error,omitempty"`
}

// ServerCert is the certificate one address of the alias presented.
type ServerCert struct {
	Address     string    `json:"address"`
	CoversAlias bool      `json:"covers_alias"`
	NotAfter    time.Time `json:"not_after"`
	Error       string    `json:"error,omitempty"`
}

type Member struct {
	Name      string  `json:"name"`
	ClientURL string  `json:"client_url"`
	Resolves  bool    `json:"resolves"`
	Healthy   bool    `json:"healthy"`
	Leader    bool    `json:"leader"`
	Version   string  `json:"version"`
	RTTMillis float64 `json:"rtt_ms"`
	Error     string  `json:"error,omitempty"`
}

// NetworkConfig compares the stored flannel network config with the desired one.
type NetworkConfig struct {
	Key         string   `json:"key"`
	State       string   `json:"state"` // absent, equal, different, or unknown when etcd was not reached
	Existing    string   `json:"existing,omitempty"`
	Desired     string   `json:"desired"`
	Differences []string `json:"differences,omitempty"`
	Error       string   `json:"error,omitempty"`
}
