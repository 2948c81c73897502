// Builds kubo's flanneld, flannel v0.12.0 (kubo-release v0.21 to v0.44), for the adoption rehearsal
// (scripts/build-flannel-v0.12). flannel v0.12.0 has no go.mod: the requirements below pin what its glide.lock
// lists, as pseudo-versions of the same commits, except three marked ~ that the module proxy does not serve at
// that commit (the nearest version it does; the gce backend, and identical trees for docker/distribution).
// `go 1.21`: Go 1.22 and later build a binary that panics at start (ugorji/go's codec init), so the build runs
// with GOTOOLCHAIN=go1.21.13.
module github.com/flannel-dns/flannel-dns/tools/flannel-v0.12

go 1.21

require (
	cloud.google.com/go v0.17.0 // ~
	github.com/PuerkitoBio/purell v1.0.0
	github.com/PuerkitoBio/urlesc v0.0.0-20160726150825-5bd2802263f2
	github.com/aws/aws-sdk-go v1.12.54
	github.com/bronze1man/goStrongswanVici v0.0.0-20171013065002-4d72634a2f11
	github.com/coreos/etcd v3.1.11+incompatible
	github.com/coreos/flannel v0.12.0
	github.com/coreos/go-iptables v0.4.0
	github.com/coreos/go-systemd v0.0.0-20161114122254-48702e0da86b
	github.com/coreos/pkg v0.0.0-20160727233714-3ac0863d7acf
	github.com/davecgh/go-spew v0.0.0-20151105211317-5215b55f46b2
	github.com/denverdino/aliyungo v0.0.0-20170629053852-f6cab0c35083
	github.com/docker/distribution v2.4.0+incompatible // ~
	github.com/emicklei/go-restful v1.1.4-0.20161212084525-09691a3b6378
	github.com/ghodss/yaml v0.0.0-20150909031657-73d445a93680
	github.com/go-ini/ini v1.28.1
	github.com/go-openapi/jsonpointer v0.0.0-20160704185906-46af16f9f7b1
	github.com/go-openapi/jsonreference v0.0.0-20160704190145-13c6e3589ad9
	github.com/go-openapi/spec v0.0.0-20160808142527-6aced65f8501
	github.com/go-openapi/swag v0.0.0-20160704191624-1d0bd113de87
	github.com/gogo/protobuf v0.0.0-20160824171236-909568be09de
	github.com/golang/glog v0.0.0-20141105023935-44145f04b68c
	github.com/golang/protobuf v0.0.0-20161109072736-4bd1920723d7
	github.com/google/gofuzz v0.0.0-20161122191042-44d81051d367
	github.com/howeyc/gopass v0.0.0-20160826175423-3ca23474a7c7
	github.com/imdario/mergo v0.0.0-20141206190957-6633656539c1
	github.com/jmespath/go-jmespath v0.0.0-20160803190731-bd40a432e4c7
	github.com/joho/godotenv v0.0.0-20161216230537-726cc8b906e3
	github.com/jonboulle/clockwork v0.1.0
	github.com/juju/errors v0.0.0-20170703010042-c7d06af17c68
	github.com/juju/ratelimit v0.0.0-20151125201925-77ed1c8a0121
	github.com/mailru/easyjson v0.0.0-20160728113105-d5b7844b561a
	github.com/spf13/pflag v0.0.0-20151013200643-08b1a584251b
	github.com/ugorji/go v0.0.0-20170107133203-ded73eae5db7
	github.com/vishvananda/netlink v0.0.0-20170220200719-fe3b5664d23a
	github.com/vishvananda/netns v0.0.0-20170219233438-54f0e4339ce7
	golang.org/x/crypto v0.0.0-20150218234220-1351f936d976
	golang.org/x/net v0.0.0-20170114055629-f2499483f923
	golang.org/x/oauth2 v0.0.0-20170629032740-5432cc9688e6
	golang.org/x/sys v0.0.0-20171215071723-d5840adf789d
	golang.org/x/text v0.0.0-20160726164857-2910a502d2bf
	google.golang.org/api v0.0.0-20170421051952-fbbaff182731 // ~
	google.golang.org/appengine v0.0.0-20160823001527-4f7eeb5305a4
	gopkg.in/inf.v0 v0.0.0-20150911125757-3887ee99ecf0
	gopkg.in/yaml.v2 v2.0.0-20150924142314-53feefa2559f
	k8s.io/apimachinery v0.0.0-20170513172009-9603df80256c
	k8s.io/client-go v3.0.1-0.20170829130306-a95edf803628+incompatible
	k8s.io/utils v0.0.0-20171219162953-0ab3217ce272
)
