package config

import "encoding/json"

type networkConfig struct {
	Network   string  `json:"Network"`
	SubnetLen int     `json:"SubnetLen"`
	Backend   backend `json:"Backend"`
}

type backend struct {
	Type string `json:"Type"`
	VNI  int    `json:"VNI,omitempty"`
	Port int    `json:"Port,omitempty"`
}

// Desired is the network config flanneld reads at <prefix>/config. Backend.Type is always set: flannel reads
// an empty type as udp.
func (n Network) Desired() []byte {
	data, err := json.Marshal(networkConfig{
		Network:   n.CIDR,
		SubnetLen: n.SubnetLen,
		Backend:   backend{Type: n.BackendType, VNI: n.VNI, Port: n.Port},
	})
	if err != nil {
		panic(err) // a struct of strings and ints always marshals
	}
	return data
}
