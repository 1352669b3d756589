package tlsedge

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// recordAEAD rebuilds, from the bytes KTLSState.CryptoInfo gives the
// kernel, what the kernel does with them: the AEAD (crypto/cipher's
// AES-GCM, x/crypto's ChaCha20-Poly1305) and each record's nonce
// (salt||iv XOR the record's sequence number).
type recordAEAD struct {
	aead cipher.AEAD
	iv   [12]byte
	seq  uint64
}

func newRecordAEAD(t *testing.T, info []byte) *recordAEAD {
	t.Helper()
	version, ciph := binary.NativeEndian.Uint16(info[0:]), binary.NativeEndian.Uint16(info[2:])
	if version != tls13Version {
		t.Fatalf("crypto_info version %#x, want TLS 1.3", version)
	}
	r := &recordAEAD{}
	var key []byte
	var seq []byte
	var err error
	switch ciph {
	case cipherAESGCM128, cipherAESGCM256:
		n := 16
		if ciph == cipherAESGCM256 {
			n = 32
		}
		if len(info) != 4+8+n+4+8 {
			t.Fatalf("crypto_info of %d bytes for cipher %d", len(info), ciph)
		}
		iv, k, salt := info[4:12], info[12:12+n], info[12+n:16+n]
		key, seq = k, info[16+n:]
		copy(r.iv[:4], salt)
		copy(r.iv[4:], iv)
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			r.aead, err = cipher.NewGCM(b)
		}
	case cipherChaCha20Poly:
		if len(info) != 4+12+32+8 {
			t.Fatalf("crypto_info of %d bytes for ChaCha20-Poly1305", len(info))
		}
		copy(r.iv[:], info[4:16])
		key, seq = info[16:48], info[48:]
		r.aead, err = chacha20poly1305.New(key)
	default:
		t.Fatalf("crypto_info cipher %d", ciph)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.seq = binary.BigEndian.Uint64(seq)
	return r
}

func (r *recordAEAD) nonce() []byte {
	n := r.iv
	for i := 0; i < 8; i++ {
		n[4+i] ^= byte(r.seq >> (56 - 8*i))
	}
	r.seq++
	return n[:]
}

// seal makes an application data record of p, as the kernel's TLS_TX would.
func (r *recordAEAD) seal(p []byte) []byte {
	inner := append(bytes.Clone(p), 23) // content type: application data
	hdr := []byte{23, 3, 3, 0, 0}
	binary.BigEndian.PutUint16(hdr[3:], uint16(len(inner)+r.aead.Overhead()))
	return r.aead.Seal(hdr, r.nonce(), inner, hdr)
}

// open decrypts one record (header and body), as the kernel's TLS_RX would,
// and returns its content and inner content type.
func (r *recordAEAD) open(rec []byte) ([]byte, byte, error) {
	inner, err := r.aead.Open(nil, r.nonce(), rec[recordHeaderLen:], rec[:recordHeaderLen])
	if err != nil {
		return nil, 0, err
	}
	inner = bytes.TrimRight(inner, "\x00")
	if len(inner) == 0 {
		return nil, 0, errors.New("empty inner plaintext")
	}
	return inner[:len(inner)-1], inner[len(inner)-1], nil
}

// readRecord reads one whole TLS record from r.
func readRecord(t *testing.T, r io.Reader) []byte {
	t.Helper()
	rec := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(r, rec); err != nil {
		t.Fatalf("reading a record's header: %v", err)
	}
	rec = append(rec, make([]byte, binary.BigEndian.Uint16(rec[3:]))...)
	if _, err := io.ReadFull(r, rec[recordHeaderLen:]); err != nil {
		t.Fatalf("reading a record's body: %v", err)
	}
	return rec
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	deadline := time.Now().Add(20 * time.Second)
	client.SetDeadline(deadline)
	server.SetDeadline(deadline)
	return client, server
}

// heldWrites holds a client's writes after its first (the ClientHello)
// until flush, which sends them in one write: the client's Finished and
// its first request then arrive together, as they do from a browser that
// sends its request right behind its Finished. Writes after flush go
// straight out.
type heldWrites struct {
	net.Conn
	mu       sync.Mutex
	writes   int
	held     []byte
	released bool         // flushed: later writes go straight out
	tapped   bytes.Buffer // what the client read
}

func (h *heldWrites) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.writes++
	if h.writes == 1 || h.released {
		return h.Conn.Write(p)
	}
	h.held = append(h.held, p...)
	return len(p), nil
}

func (h *heldWrites) flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.Conn.Write(h.held)
	h.held, h.released = nil, true
	return err
}

func (h *heldWrites) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	h.mu.Lock()
	h.tapped.Write(p[:n])
	h.mu.Unlock()
	return n, err
}

// TestKernelHandshakeKeys proves, without the kernel, that the keys, IVs
// and sequence numbers KernelHandshake hands to the kernel are the
// connection's: a request the client sent right behind its Finished is
// still in the socket and opens with the receiving state at sequence 0
// (then 1); a record crypto/tls itself sent after the handshake opens with
// the sending state at 0; and records sealed with it at 1 and 2 are read
// by the client's crypto/tls as the server's next data.
func TestKernelHandshakeKeys(t *testing.T) {
	certFile, keyFile := writeTestCert(t, "*.apps.test")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, alpn := range []string{"http/1.1", "h2"} {
		t.Run(alpn, func(t *testing.T) {
			cc, sc := tcpPair(t)
			held := &heldWrites{Conn: cc}
			// A session cache, as browsers have: the client asks for tickets.
			client := tls.Client(held, &tls.Config{ServerName: "blog.apps.test", InsecureSkipVerify: true, NextProtos: []string{alpn},
				ClientSessionCache: tls.NewLRUClientSessionCache(1)})
			request := []byte("GET / HTTP/1.1\r\nHost: blog.apps.test\r\n\r\n")
			clientDone := make(chan error, 1)
			go func() {
				if err := client.Handshake(); err != nil {
					clientDone <- err
					return
				}
				if _, err := client.Write(request); err != nil {
					clientDone <- err
					return
				}
				clientDone <- held.flush()
			}()
			cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
			tc, st, err := KernelHandshake(sc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-clientDone; err != nil {
				t.Fatal(err)
			}
			if got := tc.ConnectionState().NegotiatedProtocol; got != alpn {
				t.Errorf("ALPN %q, want %q", got, alpn)
			}
			if st.TX.Seq != 0 || st.RX.Seq != 0 {
				t.Errorf("sequence numbers TX %d RX %d, want 0 and 0", st.TX.Seq, st.RX.Seq)
			}
			txInfo, err := st.CryptoInfo(st.TX)
			if err != nil {
				t.Fatal(err)
			}
			rxInfo, err := st.CryptoInfo(st.RX)
			if err != nil {
				t.Fatal(err)
			}
			tx, rx := newRecordAEAD(t, txInfo), newRecordAEAD(t, rxInfo)

			// Receiving: the request is still in the socket, record seq 0.
			got, typ, err := rx.open(readRecord(t, sc))
			if err != nil || typ != 23 || !bytes.Equal(got, request) {
				t.Fatalf("the client's first record: %q type %d %v; want the request, application data", got, typ, err)
			}
			go client.Write([]byte("second"))
			got, typ, err = rx.open(readRecord(t, sc))
			if err != nil || typ != 23 || string(got) != "second" {
				t.Fatalf("the client's second record: %q type %d %v", got, typ, err)
			}

			// Sending: crypto/tls's own first record is seq 0.
			if _, err := tc.Write([]byte("from crypto/tls")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			n, err := client.Read(buf)
			if err != nil || string(buf[:n]) != "from crypto/tls" {
				t.Fatalf("client read %q %v", buf[:n], err)
			}
			held.mu.Lock()
			wire := held.tapped.Bytes()
			held.mu.Unlock()
			last := lastRecord(wire)
			got, typ, err = tx.open(last)
			if err != nil || typ != 23 || string(got) != "from crypto/tls" {
				t.Fatalf("crypto/tls's first record opened with the sending state at seq 0: %q type %d %v", got, typ, err)
			}
			// What the kernel would send next: seq 1 and 2.
			for _, msg := range []string{"HTTP/1.1 200 OK\r\n", "Content-Length: 0\r\n\r\n"} {
				if _, err := sc.Write(tx.seal([]byte(msg))); err != nil {
					t.Fatal(err)
				}
				n, err := io.ReadFull(client, buf[:len(msg)])
				if err != nil || string(buf[:n]) != msg {
					t.Fatalf("client read %q %v, want %q", buf[:n], err, msg)
				}
			}
		})
	}
}

// lastRecord returns the last whole TLS record in wire.
func lastRecord(wire []byte) []byte {
	var last []byte
	for len(wire) >= recordHeaderLen {
		n := recordHeaderLen + int(binary.BigEndian.Uint16(wire[3:]))
		if n > len(wire) {
			break
		}
		last, wire = wire[:n], wire[n:]
	}
	return last
}

// TestKernelHandshakeOtherSuites does the same with openssl's s_client as
// the peer, for the TLS 1.3 ciphers Go's client does not choose on this
// machine (it prefers AES-128-GCM where the CPU has AES).
func TestKernelHandshakeOtherSuites(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	certFile, keyFile := writeTestCert(t, "*.apps.test")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range []struct {
		name string
		id   uint16
	}{{"TLS_AES_256_GCM_SHA384", tls.TLS_AES_256_GCM_SHA384}, {"TLS_CHACHA20_POLY1305_SHA256", tls.TLS_CHACHA20_POLY1305_SHA256}} {
		t.Run(suite.name, func(t *testing.T) {
			ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			cmd := exec.Command("openssl", "s_client", "-connect", ln.Addr().String(), "-tls1_3", "-ciphersuites", suite.name,
				"-servername", "blog.apps.test", "-quiet", "-no_ign_eof")
			stdin, _ := cmd.StdinPipe()
			var stdout lockedBuf
			cmd.Stdout = &stdout
			cmd.Stderr = io.Discard
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
			sc, err := ln.AcceptTCP()
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			sc.SetDeadline(time.Now().Add(20 * time.Second))
			tc, st, err := KernelHandshake(sc, &tls.Config{Certificates: []tls.Certificate{cert}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.ConnectionState().CipherSuite != suite.id || st.CipherSuite != suite.id {
				t.Fatalf("negotiated %s", tls.CipherSuiteName(tc.ConnectionState().CipherSuite))
			}
			txInfo, _ := st.CryptoInfo(st.TX)
			rxInfo, _ := st.CryptoInfo(st.RX)
			tx, rx := newRecordAEAD(t, txInfo), newRecordAEAD(t, rxInfo)
			io.WriteString(stdin, "GET / HTTP/1.1\n")
			got, typ, err := rx.open(readRecord(t, sc))
			if err != nil || typ != 23 || string(got) != "GET / HTTP/1.1\n" {
				t.Fatalf("s_client's first record: %q type %d %v", got, typ, err)
			}
			if _, err := sc.Write(tx.seal([]byte("HTTP/1.1 200 OK\n"))); err != nil {
				t.Fatal(err)
			}
			for end := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "HTTP/1.1 200 OK") && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(stdout.String(), "HTTP/1.1 200 OK") {
				t.Fatalf("s_client did not print the record sealed with the sending state; it printed %q", stdout.String())
			}
		})
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestKernelHandshakeTLS12 leaves a TLS 1.2 connection to crypto/tls.
func TestKernelHandshakeTLS12(t *testing.T) {
	certFile, keyFile := writeTestCert(t, "*.apps.test")
	cert, _ := tls.LoadX509KeyPair(certFile, keyFile)
	cc, sc := tcpPair(t)
	client := tls.Client(cc, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12})
	go func() {
		if client.Handshake() == nil {
			client.Write([]byte("ping"))
		}
	}()
	tc, st, err := KernelHandshake(sc, &tls.Config{Certificates: []tls.Certificate{cert}})
	if !errors.Is(err, ErrNotKernelTLS) || st != nil || tc == nil {
		t.Fatalf("TLS 1.2: got state %v, err %v; want the tls.Conn and ErrNotKernelTLS", st, err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(tc, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("the tls.Conn serves on: %q %v", buf, err)
	}
}

// TestKernelTLSProbe: on a kernel without the "tls" upper-layer protocol
// the probe says so, naming it and what the kernel has instead.
func TestKernelTLSProbe(t *testing.T) {
	k := KernelTLS()
	ulps, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_ulp")
	if err != nil {
		t.Skip("no /proc/sys/net/ipv4/tcp_available_ulp")
	}
	hasTLS := false
	for _, u := range strings.Fields(string(ulps)) {
		hasTLS = hasTLS || u == "tls"
	}
	if hasTLS != k.Available {
		t.Errorf("probe says available %v (%s); the kernel's upper-layer protocols: %q", k.Available, k.Missing, ulps)
	}
	if !k.Available && (!strings.Contains(k.Missing, `TCP_ULP, "tls"`) || !strings.Contains(k.Missing, strings.TrimSpace(string(ulps))) || !strings.Contains(k.Missing, "CONFIG_TLS")) {
		t.Errorf("what is missing: %q", k.Missing)
	}
}

// writeTestCert writes a self-signed ECDSA P-256 certificate for name and
// its key into a temporary folder.
func writeTestCert(t testing.TB, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return certFile, keyFile
}

// BenchmarkHandshake compares a server handshake through KernelHandshake
// (a config clone per connection, its key log, reads record by record)
// with crypto/tls's own, over loopback TCP with a crypto/tls client:
// go test ./internal/tlsedge -run '^$' -bench Handshake
func BenchmarkHandshake(b *testing.B) {
	certFile, keyFile := writeTestCert(b, "*.apps.test")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		b.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	for _, kernel := range []bool{false, true} {
		name := "crypto-tls"
		if kernel {
			name = "kernel-handshake"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				ln, _ := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
				go func() {
					c, err := net.Dial("tcp", ln.Addr().String())
					if err == nil {
						tls.Client(c, &tls.Config{InsecureSkipVerify: true}).Handshake()
						c.Close()
					}
				}()
				sc, err := ln.Accept()
				ln.Close()
				if err != nil {
					b.Fatal(err)
				}
				if kernel {
					_, _, err = KernelHandshake(sc, cfg)
				} else {
					err = tls.Server(sc, cfg).Handshake()
				}
				if err != nil {
					b.Fatal(err)
				}
				sc.Close()
			}
		})
	}
}
