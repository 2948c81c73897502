// Builds etcd and etcdctl v3.3.12, the etcd of cfcr-etcd-release v1.11.1 (kubo-deployment v0.32), for the
// simulated cluster (scripts/build-etcd-3.3). etcd v3.3 has no go.mod: the requirements below pin exactly what
// the tag's cmd/vendor holds (its glide.lock's commits, as pseudo-versions where no tag names them), and
// go-grpc-middleware v1.0.0, which v3.3.12 vendors at the top level and glide.lock omits.
// `go 1.21`: the build runs with GOTOOLCHAIN=go1.21.13, the oldest Go the module proxy serves as a toolchain,
// the nearest to the Go 1.10.8 that upstream compiled v3.3.12 with.
module github.com/flannel-dns/flannel-dns/tools/etcd-v3.3.12

go 1.21

require (
	github.com/beorn7/perks v0.0.0-20180321164747-3a771d992973
	github.com/bgentry/speakeasy v0.1.0
	github.com/coreos/bbolt v1.3.1-coreos.6
	github.com/coreos/etcd v3.3.12+incompatible
	github.com/coreos/go-semver v0.2.0
	github.com/coreos/go-systemd v0.0.0-20170731111925-d21964639418
	github.com/coreos/pkg v0.0.0-20160727233714-3ac0863d7acf
	github.com/cpuguy83/go-md2man v1.0.7-0.20170603125239-23709d084719
	github.com/dgrijalva/jwt-go v3.0.0+incompatible
	github.com/dustin/go-humanize v0.0.0-20171111073723-bb3d318650d4
	github.com/ghodss/yaml v1.0.0
	github.com/gogo/protobuf v0.0.0-20171007142547-342cbe0a0415
	github.com/golang/groupcache v0.0.0-20160516000752-02826c3e7903
	github.com/golang/protobuf v0.0.0-20171113180720-1e59b77b52bf
	github.com/google/btree v0.0.0-20161005200959-925471ac9e21
	github.com/gorilla/websocket v0.0.0-20170926233335-4201258b820c
	github.com/grpc-ecosystem/go-grpc-middleware v1.0.0
	github.com/grpc-ecosystem/go-grpc-prometheus v0.0.0-20170826090648-0dafe0d496ea
	github.com/grpc-ecosystem/grpc-gateway v1.3.0
	github.com/inconshreveable/mousetrap v1.0.0
	github.com/jonboulle/clockwork v0.1.0
	github.com/mattn/go-runewidth v0.0.2
	github.com/matttproud/golang_protobuf_extensions v1.0.0
	github.com/olekukonko/tablewriter v0.0.0-20170122224234-a0225b3f23b5
	github.com/prometheus/client_golang v0.0.0-20171005112915-5cec1d0429b0
	github.com/prometheus/client_model v0.0.0-20170216185247-6f3806018612
	github.com/prometheus/common v0.0.0-20171104095907-e3fb1a1acd76
	github.com/prometheus/procfs v0.0.0-20171017214025-a6e9df898b13
	github.com/russross/blackfriday v0.0.0-20170728175326-4048872b16cc
	github.com/sirupsen/logrus v1.0.3
	github.com/soheilhy/cmux v0.1.3
	github.com/spf13/cobra v0.0.0-20151124153217-1c44ec8d3f15
	github.com/spf13/pflag v1.0.0
	github.com/tmc/grpc-websocket-proxy v0.0.0-20170815181823-89b8d40f7ca8
	github.com/ugorji/go v0.0.0-20171019201919-bdcc60b419d1
	github.com/urfave/cli v1.18.0
	github.com/xiang90/probing v0.0.0-20160813154853-07dd2e8dfe18
	go.uber.org/atomic v1.3.1
	go.uber.org/multierr v1.1.0
	go.uber.org/zap v1.7.1
	golang.org/x/crypto v0.0.0-20170930174604-9419663f5a44
	golang.org/x/net v0.0.0-20170828231752-66aacef3dd8a
	golang.org/x/sys v0.0.0-20171006175012-ebfc5b463182
	golang.org/x/text v0.0.0-20170810154203-b19bf474d317
	golang.org/x/time v0.0.0-20170420181420-c06e80d9300e
	google.golang.org/genproto v0.0.0-20170731182057-09f6ed296fc6
	google.golang.org/grpc v1.7.5
	gopkg.in/cheggaaa/pb.v1 v1.0.2
	gopkg.in/yaml.v2 v2.0.0-20170407172122-cd8b52f8269e
)
