//go:build linux

package tlsedge

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// KernelTLSSupport is what the running kernel offers for TLS records.
type KernelTLSSupport struct {
	Available bool   // TCP_ULP "tls" with TLS 1.3 AES-GCM keys in both directions
	Missing   string // otherwise what is missing, in words for the operator
}

// KernelTLS reports, once per process (probed on first use), whether the
// kernel can take a connection's TLS records over: a loopback TCP
// connection of its own is given the "tls" upper-layer protocol and TLS 1.3
// AES-128-GCM keys for sending and receiving, as InstallKernelTLS does.
func KernelTLS() KernelTLSSupport { return kernelTLSOnce() }

var kernelTLSOnce = sync.OnceValue(probeKernelTLS)

// probeKernelTLS tries kTLS on a loopback connection pair.
func probeKernelTLS() KernelTLSSupport {
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return KernelTLSSupport{Missing: fmt.Sprintf("no loopback listener to probe kernel TLS on (%v)", err)}
	}
	defer ln.Close()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		return KernelTLSSupport{Missing: fmt.Sprintf("no loopback connection to probe kernel TLS on (%v)", err)}
	}
	defer c.Close()
	s, err := ln.AcceptTCP()
	if err != nil {
		return KernelTLSSupport{Missing: fmt.Sprintf("no loopback connection to probe kernel TLS on (%v)", err)}
	}
	defer s.Close()
	zero := RecordState{Key: make([]byte, 16), IV: make([]byte, 12)}
	probe := &KTLSState{CipherSuite: 0x1301, TX: zero, RX: zero} // TLS_AES_128_GCM_SHA256
	rc, err := s.SyscallConn()
	if err != nil {
		return KernelTLSSupport{Missing: err.Error()}
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { ierr = InstallKernelTLS(int(fd), probe) }); err != nil {
		return KernelTLSSupport{Missing: err.Error()}
	}
	if ierr != nil {
		ulps, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_available_ulp")
		have := strings.TrimSpace(string(ulps))
		if have == "" {
			have = "none"
		}
		return KernelTLSSupport{Missing: fmt.Sprintf("%v (the kernel's TCP upper-layer protocols: %s; kernel TLS needs CONFIG_TLS, the tls module, and Linux 5.1 or later)", ierr, have)}
	}
	return KernelTLSSupport{Available: true}
}

// InstallKernelTLS hands the record layer of the TCP connection fd to the
// kernel with s's keys and sequence numbers: the "tls" upper-layer
// protocol, then TLS_TX and TLS_RX. From then on plain reads and writes
// (writev, sendfile) on fd carry application data in TLS records; a record
// of another type (an alert, a KeyUpdate) fails a plain read with EIO and
// is read with recvmsg's TLS_GET_RECORD_TYPE control message.
func InstallKernelTLS(fd int, s *KTLSState) error {
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_ULP, "tls"); err != nil {
		return fmt.Errorf(`setsockopt(TCP_ULP, "tls"): %w`, err)
	}
	for _, d := range []struct {
		opt  int
		name string
		r    RecordState
	}{{tlsTX, "TLS_TX", s.TX}, {tlsRX, "TLS_RX", s.RX}} {
		info, err := s.CryptoInfo(d.r)
		if err != nil {
			return err
		}
		if err := unix.SetsockoptString(fd, solTLS, d.opt, string(info)); err != nil {
			return fmt.Errorf("setsockopt(SOL_TLS, %s): %w", d.name, err)
		}
	}
	return nil
}
