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
// launchers that start together, one copies each key. A lease keeps the TTL it has left in v2; one that etcd
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

// Read fetches everything under prefix from the v2 API of the member at endpoint (an https URL), with client
// (mutual TLS, following no redirect: members.Pass.HTTPClient); a redirect is an error. No answer, or a
// server error, is a *TransientError. A prefix v2 does not have is empty Data. The v2 API is etcd's JSON over HTTP (GET
// /v2/keys/<key>?recursive=true); one request, no client library (see the package's commit for why).
func Read(ctx context.Context, client *http.Client, endpoint, prefix string) (Data, error) {
	u := strings.TrimSuffix(endpoint, "/") + "/v2/keys" + (&url.URL{Path: prefix}).EscapedPath() + "?recursive=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Data{}, bosherr.WrapErrorf(err, "Asking for '%s'", u)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Data{}, &TransientError{Err: bosherr.WrapErrorf(err, "Reading '%s' from the v2 API", prefix)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return Data{}, &TransientError{Err: bosherr.WrapErrorf(err, "Reading the v2 API's answer for '%s'", prefix)}
	}
	if len(body) > maxBody {
		return Data{}, bosherr.Errorf("The v2 API's answer for '%s' is larger than %d bytes", prefix, maxBody)
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return Data{}, bosherr.Errorf("The v2 API at '%s' answered %s to '%s' for '%s'; a redirect is not followed",
			endpoint, resp.Status, resp.Header.Get("Location"), prefix)
	}
	return parse(resp.StatusCode, body, prefix)
}

func parse(status int, body []byte, prefix string) (Data, error) {
	var answer struct {
		ErrorCode int  `json:"errorCode"`
		Node      node `json:"node"`
	}
	jsonErr := json.Unmarshal(body, &answer)
	switch {
	case status == http.StatusNotFound && jsonErr == nil && answer.ErrorCode == keyNotFound:
		return Data{}, nil
	case status == http.StatusNotFound:
		return Data{}, ErrNotServed
	case status != http.StatusOK:
		err := bosherr.Errorf("The v2 API answered %d for '%s': %s", status, prefix, excerpt(body))
		if status >= http.StatusInternalServerError {
			return Data{}, &TransientError{Err: err}
		}
		return Data{}, err
	case jsonErr != nil:
		return Data{}, bosherr.WrapErrorf(jsonErr, "The v2 API's answer for '%s' is not JSON: %s", prefix, excerpt(body))
	}
	var data Data
	for _, n := range answer.Node.Nodes {
		switch {
		case n.Key == strings.TrimSuffix(prefix, "/")+"/config" && !n.Dir:
			data.Config = []byte(n.Value)
		case n.Key == strings.TrimSuffix(prefix, "/")+"/subnets" && n.Dir:
			for _, l := range n.Nodes {
				if !l.Dir {
					data.Leases = append(data.Leases, Lease{Key: l.Key, Value: []byte(l.Value), TTL: l.TTL})
				}
			}
		}
	}
	return data, nil
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
