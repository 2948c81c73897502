package master

import "strings"

// EtcdctlV2 runs etcdctl against the member's v2 API (ETCDCTL_API=2), as kubo's flanneld job does, with the
// client certificate.
func (m *Member) EtcdctlV2(args ...string) (string, error) {
	full := []string{"env", "ETCDCTL_API=2", "/var/vcap/packages/etcd/etcdctl", "--endpoints=" + m.ClientURL(),
		"--ca-file=" + ConfigDir + "/ca.crt", "--cert-file=" + ConfigDir + "/client.crt",
		"--key-file=" + ConfigDir + "/client.key", "--timeout=5s"}
	return m.Run(append(full, args...)...)
}

// V2Values reads every key under dir in the v2 store with its value ("" for a directory), none when dir does
// not exist.
func (m *Member) V2Values(dir string) (map[string]string, error) {
	out, err := m.EtcdctlV2("ls", dir)
	if err != nil {
		if strings.Contains(err.Error(), "Key not found") {
			return map[string]string{}, nil
		}
		return nil, err
	}
	values := map[string]string{}
	for _, key := range strings.Fields(out) {
		value, err := m.EtcdctlV2("get", key)
		if err != nil {
			return nil, err
		}
		values[key] = strings.TrimSpace(value)
	}
	return values, nil
}
