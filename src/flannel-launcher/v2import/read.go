// Package v2import carries kubo's flannel data from etcd's v2 store into the v3 store that flannel 0.28 reads,
// so that during the adopting deploy the nodes already on flannel-dns see the leases of the nodes still on
// kubo's flanneld (flannel 0.12 keeps its network config and leases only in v2): they route to them, and never
// hand one of their subnets to a node that needs a new lease (a VM recreated mid-roll).
//
//	data, err := v2import.Read(ctx, httpClient, "https://etcd.cfcr.internal:2379", "/coreos.com/network")
//	result, err := v2import.Import(ctx, v3Client, "/coreos.com/network", data, logger)
//
// Read never writes, and nothing here writes to v2. Import writes to v3 only what v3 lacks, each key only if it is
// still absent, in one transaction (or a few, for clusters beyond etcd's 128 operations per transaction): of
// launchers that start together, one copies each key. A lease keeps the TTL it has left in v2, 24 h at most; one that etcd
// refuses is left out alone. A failure that may pass is a *TransientError, for the caller to retry.
package v2import

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"github.com/coreos/go-semver/semver"
	etcdversion "go.etcd.io/etcd/api/v3/version"
)

// Data is what the v2 store holds under flannel's prefix.
type Data struct {
	Config []byte // the network config, nil when there is none
	Leases []Lease
}

// Lease is one key under <prefix>/subnets.
type Lease struct {
	Key   string // /coreos.com/network/subnets/198.18.7.0-24
	Value []byte
	TTL   int64 // seconds left; 0 for a key without one
}

// ErrNotServed means the member does not serve the v2 API (etcd 3.4 and 3.5 with --enable-v2=false, 3.6).
var ErrNotServed = errors.New("the etcd member does not serve the v2 API")

// Served tells whether etcd of the given version can serve the v2 API: 3.5 was the last that could. A version
// that does not parse may.
func Served(version string) bool {
	v, err := semver.NewVersion(version)
	return err != nil || v.LessThan(etcdversion.V3_6)
}

// maxBody bounds what a v2 answer may take in memory: a lease is about 150 bytes.
const maxBody = 16 << 20

// node is a key of the v2 API's answer.
type node struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Dir   bool   `json:"dir"`
	TTL   int64  `json:"ttl"`
	Nodes []node `json:"nodes"`
}

// Read fetches flannel's network config and leases under prefix from the v2 API of the member at endpoint (an
// https URL), with client (mutual TLS, following no redirect: members.Pass.HTTPClient); a redirect is an error.
// No answer, or a server error, is a *TransientError. What v2 does not have is empty Data. It asks for
// <prefix>/config and for <prefix>/subnets, not for the prefix itself: a v2 user may be allowed below the prefix
// only (cfcr-etcd 1.11 gives kubo's flanneld user /coreos.com/network/*). The v2 API is etcd's JSON over HTTP
// (GET /v2/keys/<key>); no client library (see the package's commit for why).
func Read(ctx context.Context, client *http.Client, endpoint, prefix string) (Data, error) {
	base := strings.TrimSuffix(prefix, "/")
	config, found, err := get(ctx, client, endpoint, base+"/config")
	if err != nil {
		return Data{}, err
	}
	var data Data
	if found && !config.Dir {
		data.Config = []byte(config.Value)
	}
	subnets, found, err := get(ctx, client, endpoint, base+"/subnets")
	if err != nil || !found {
		return data, err
	}
	for _, l := range subnets.Nodes {
		if !l.Dir {
			data.Leases = append(data.Leases, Lease{Key: l.Key, Value: []byte(l.Value), TTL: l.TTL})
		}
	}
	return data, nil
}

// get fetches key (recursively, for a directory) from the v2 API; found is false when v2 does not have it.
func get(ctx context.Context, client *http.Client, endpoint, key string) (n node, found bool, err error) {
	u := strings.TrimSuffix(endpoint, "/") + "/v2/keys" + (&url.URL{Path: key}).EscapedPath() + "?recursive=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return node{}, false, bosherr.WrapErrorf(err, "Asking for '%s'", u)
	}
	resp, err := client.Do(req)
	if err != nil {
		return node{}, false, &TransientError{Err: bosherr.WrapErrorf(err, "Reading '%s' from the v2 API", key)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return node{}, false, &TransientError{Err: bosherr.WrapErrorf(err, "Reading the v2 API's answer for '%s'", key)}
	}
	if len(body) > maxBody {
		return node{}, false, bosherr.Errorf("The v2 API's answer for '%s' is larger than %d bytes", key, maxBody)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return node{}, false, bosherr.Errorf("The v2 API at '%s' answered %s to '%s' for '%s'; a redirect is not followed",
			endpoint, resp.Status, resp.Header.Get("Location"), key)
	}
	return parse(resp.StatusCode, body, key)
}

func parse(status int, body []byte, key string) (node, bool, error) {
	var answer struct {
		ErrorCode int  `json:"errorCode"`
		Node      node `json:"node"`
	}
	jsonErr := json.Unmarshal(body, &answer)
	switch {
	case status == http.StatusNotFound && jsonErr == nil && answer.ErrorCode == keyNotFound:
		return node{}, false, nil
	case status == http.StatusNotFound:
		return node{}, false, ErrNotServed
	case status != http.StatusOK:
		err := bosherr.Errorf("The v2 API answered %d for '%s': %s", status, key, excerpt(body))
		if status >= http.StatusInternalServerError {
			return node{}, false, &TransientError{Err: err}
		}
		return node{}, false, err
	case jsonErr != nil:
		return node{}, false, bosherr.WrapErrorf(jsonErr, "The v2 API's answer for '%s' is not JSON: %s", key, excerpt(body))
	}
	return answer.Node, true, nil
}

// keyNotFound is the v2 API's error code for a key that does not exist.
const keyNotFound = 100

func excerpt(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
