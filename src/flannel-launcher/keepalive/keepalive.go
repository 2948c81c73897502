// Package keepalive makes flanneld notice a dead etcd member within seconds.
//
// flanneld's etcd client sets no TCP keepalive of its own, so its socket to a member whose network is cut (no
// reset) lives on the kernel's settings: on a stemcell, whose sysctls set 120 s idle and 8 probes 30 s apart,
// 6 min on an idle socket and about 15 min (tcp_retries2) with data in flight; on a stock kernel about
// 2 h 11 min idle (7200 s, then 9 probes 75 s apart). flanneld
// takes no option for this, but the launcher is flanneld's parent with the same uid, which lets it copy
// flanneld's socket descriptors (pidfd_getfd) and set keepalive and TCP_USER_TIMEOUT on the shared socket.
// Once the member stops answering, the kernel fails the socket, and flanneld's gRPC client reconnects through
// the alias. The options live on the socket, so the launcher's copy is closed at once.
//
// Each socket is looked at once (remembered by inode), through the copy: getpeername tells its port. Matching
// /proc/<pid>/fd against /proc/<pid>/net/tcp instead would read every TCP socket of the host's network
// namespace on every tick (about 20 ms a tick with 2,000 sockets, against 80 us for listing flanneld's fds).
//
// Chosen over destroying the socket (SOCK_DESTROY via netlink), which needs CAP_NET_ADMIN and a separate way
// to learn that the member is dead (an idle socket gives the kernel no evidence without probes), and over the
// keepalive sysctls, which change the sockets of every process in the host's network namespace and have no
// counterpart for TCP_USER_TIMEOUT.
//
// pidfd_open and pidfd_getfd are missing from bpm's seccomp profile for unprivileged jobs, which is how the
// flanneld job runs. There the Tuner's first cycle fails with a RefusedError, and the launcher switches to the
// Reaper: ICMP echo to each member flanneld is connected to (CAP_NET_RAW), and SOCK_DESTROY of flanneld's
// connections to a member that stops answering (CAP_NET_ADMIN) when the kernel's TCP state of those connections
// (NETLINK_SOCK_DIAG) shows no ACK from it either. docs/failover.md has the figures and the details.
package keepalive

const logTag = "keepalive"
