//go:build !linux

package tlsedge

import "errors"

// KernelTLSSupport is what the running kernel offers for TLS records.
type KernelTLSSupport struct {
	Available bool
	Missing   string
}

// KernelTLS reports that kernel TLS is Linux's alone.
func KernelTLS() KernelTLSSupport {
	return KernelTLSSupport{Missing: "kernel TLS is Linux's (TCP_ULP \"tls\")"}
}

// InstallKernelTLS fails: kernel TLS is Linux's alone.
func InstallKernelTLS(fd int, s *KTLSState) error { return errors.New("kernel TLS: Linux only") }
