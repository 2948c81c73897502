package monit_test

import (
	"encoding/xml"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html/charset"

	"github.com/flannel-dns/flannel-dns/src/e2e/monit"
)

// statusXML is the shape of what monit 5.2.5 answers on /_status2?format=xml (trimmed): its group lists the
// services in the reverse order of its control files.
const statusXML = `<?xml version="1.0" encoding="ISO-8859-1"?><monit id="8ff3" incarnation="1796401222" version="5.2.5">` +
	`<services>` +
	`<service name="flanneld"><type>3</type><status>0</status><monitor>2</monitor><pendingaction>0</pendingaction><pid>42</pid></service>` +
	`<service name="bosh-dns"><type>3</type><status>512</status><monitor>1</monitor><pendingaction>0</pendingaction><status_message><![CDATA[process is not running]]></status_message></service>` +
	`<service name="etcd"><type>3</type><status>0</status><monitor>0</monitor><pendingaction>1</pendingaction></service>` +
	`<service name="system_vm"><type>5</type><status>0</status><monitor>1</monitor></service>` +
	`</services><servicegroups><servicegroup name="vcap"><service>etcd</service><service>bosh-dns</service><service>flanneld</service></servicegroup></servicegroups></monit>`

var _ = Describe("Status", func() {
	var st monit.Status

	BeforeEach(func() {
		st = monit.Status{}
		decoder := xml.NewDecoder(strings.NewReader(statusXML))
		decoder.CharsetReader = charset.NewReaderLabel
		Expect(decoder.Decode(&st)).To(Succeed())
	})

	It("lists a group's services in the group's order, without the services outside it", func() {
		var names []string
		for _, s := range st.Group("vcap") {
			names = append(names, s.Name)
		}
		Expect(names).To(Equal([]string{"etcd", "bosh-dns", "flanneld"}))
		Expect(st.Group("none")).To(BeEmpty())
		Expect(st.Incarnation).To(Equal("1796401222"))
	})

	It("says what the agent makes of each service", func() {
		states := map[string]string{}
		for _, s := range st.Group("vcap") {
			states[s.Name] = s.State()
		}
		Expect(states).To(Equal(map[string]string{"etcd": "unknown", "bosh-dns": "failing", "flanneld": "starting"}))
		Expect(st.Group("vcap")[1].Message).To(Equal("process is not running"))
		Expect(st.Group("vcap")[2].PID).To(Equal(42))
		Expect(st.Group("vcap")[0].Pending).To(Equal(1))
	})
})
