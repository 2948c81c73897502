package monit

import (
	"context"
	"encoding/xml"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	bosherr "github.com/cloudfoundry/bosh-utils/errors"
	"golang.org/x/net/html/charset"

	"github.com/flannel-dns/flannel-dns/src/e2e/network"
)

// Address is where a stemcell's monitrc has monit's HTTP interface listen, inside the VM.
const Address = "127.0.0.1:2822"

// Client talks to the monit daemon of one VM through its HTTP interface, as the BOSH agent does: basic auth
// with the credentials of monit.user, a POST of action=<start|stop|unmonitor> per service, and the status as
// XML from /_status2.
type Client struct {
	user, password string
	http           *http.Client
}

// NewClient is a client of the monit listening on Address in network namespace ns, with the credentials that
// userFile (monit.user, "user:password", as seen from the host) holds.
func NewClient(ns, userFile string) (*Client, error) {
	data, err := os.ReadFile(userFile)
	if err != nil {
		return nil, bosherr.WrapError(err, "Reading the monit user file")
	}
	user, password, ok := strings.Cut(strings.TrimSpace(string(data)), ":")
	if !ok {
		return nil, bosherr.Errorf("Monit user file '%s' is not user:password", userFile)
	}
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var conn net.Conn
		err := network.InNamespace(ns, func() error {
			var err error
			conn, err = (&net.Dialer{Timeout: 2 * time.Second}).DialContext(ctx, "tcp", Address)
			return err
		})
		return conn, err
	}
	transport := &http.Transport{DialContext: dial, DisableKeepAlives: true}
	return &Client{user: user, password: password, http: &http.Client{Transport: transport, Timeout: 10 * time.Second}}, nil
}

// Start, Stop and Unmonitor ask monit to act on one service; monit does it on its own, after the answer.
func (c *Client) Start(service string) error { return c.act(service, "start") }

// Stop: see Start.
func (c *Client) Stop(service string) error { return c.act(service, "stop") }

// Unmonitor: see Start.
func (c *Client) Unmonitor(service string) error { return c.act(service, "unmonitor") }

func (c *Client) act(service, action string) error {
	resp, err := c.do("POST", "/"+url.PathEscape(service), "action="+action)
	if err != nil {
		return bosherr.WrapErrorf(err, "Asking monit to %s %s", action, service)
	}
	defer resp.Body.Close()
	return nil
}

// Status is monit's view of every service and group.
func (c *Client) Status() (Status, error) {
	resp, err := c.do("GET", "/_status2?format=xml", "")
	if err != nil {
		return Status{}, bosherr.WrapError(err, "Getting monit's status")
	}
	defer resp.Body.Close()
	decoder := xml.NewDecoder(resp.Body)
	decoder.CharsetReader = charset.NewReaderLabel // monit answers in ISO-8859-1
	var st Status
	if err := decoder.Decode(&st); err != nil {
		return Status{}, bosherr.WrapError(err, "Parsing monit's status")
	}
	return st, nil
}

func (c *Client) do(method, path, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, "http://"+Address+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(c.user, c.password)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		return nil, bosherr.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(text)))
	}
	return resp, nil
}

// Status is monit's status document.
type Status struct {
	Incarnation string    `xml:"incarnation,attr"`
	Services    []Service `xml:"services>service"`
	Groups      []struct {
		Name     string   `xml:"name,attr"`
		Services []string `xml:"service"`
	} `xml:"servicegroups>servicegroup"`
}

// Service is one service in monit's status.
type Service struct {
	Name    string `xml:"name,attr"`
	Status  int    `xml:"status"` // 0: no error
	Message string `xml:"status_message"`
	Monitor int    `xml:"monitor"` // 0: not monitored, 1: monitored, 2: initializing
	Pending int    `xml:"pendingaction"`
	PID     int    `xml:"pid"`
}

// State is what the BOSH agent makes of a service's status: unknown (not monitored), starting (monit
// initialises it), running, or failing.
func (s Service) State() string {
	switch {
	case s.Monitor == 0:
		return "unknown"
	case s.Monitor == 2:
		return "starting"
	case s.Status == 0:
		return "running"
	}
	return "failing"
}

// Group lists the services of group name, in monit's order, as the agent finds them.
func (st Status) Group(name string) []Service {
	var members []string
	for _, g := range st.Groups {
		if g.Name == name {
			members = g.Services
		}
	}
	var services []Service
	for _, name := range members {
		for _, s := range st.Services {
			if s.Name == name {
				services = append(services, s)
			}
		}
	}
	return services
}
