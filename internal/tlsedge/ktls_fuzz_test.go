package tlsedge

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// The kernel-TLS route's parsing, fuzzed as the loops' parsers are
// (internal/edge/loop_fuzz_test.go): the record-exact reader crypto/tls
// reads the handshake through, against crypto/tls reading the same bytes
// directly, and the key log lines. `make test` runs each target for a
// while; plain `go test` runs the seeds (testdata/fuzz/<FuzzName>/ and
// the f.Add calls).

// chunkConn serves in as a net.Conn's reads, in chunks whose sizes come
// from sizes (cycled; 0 means 1), and discards writes. It records how much
// of in was read.
type chunkConn struct {
	net.Conn // nil: only Read, Write and the methods below are used
	in       []byte
	sizes    []byte
	k, read  int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if c.read == len(c.in) {
		return 0, io.EOF
	}
	n := 1 << 16
	if len(c.sizes) > 0 {
		n = max(int(c.sizes[c.k%len(c.sizes)]), 1)
		c.k++
	}
	n = min(n, len(p), len(c.in)-c.read)
	copy(p, c.in[c.read:c.read+n])
	c.read += n
	return n, nil
}

func (c *chunkConn) Write(p []byte) (int, error)        { return len(p), nil }
func (c *chunkConn) Close() error                       { return nil }
func (c *chunkConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *chunkConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *chunkConn) SetDeadline(time.Time) error        { return nil }
func (c *chunkConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *chunkConn) SetWriteDeadline(t time.Time) error { return nil }

// recordEnds returns the offsets in b where a TLS record ends, by the
// record headers' lengths alone.
func recordEnds(b []byte) map[int]bool {
	ends := map[int]bool{0: true}
	for off := 0; off+recordHeaderLen <= len(b); {
		off += recordHeaderLen + int(binary.BigEndian.Uint16(b[off+3:]))
		ends[off] = true
	}
	return ends
}

// FuzzRecordReader: whatever the bytes and however the network splits
// them, recordReader returns them in order, none lost or added, and no
// Read crosses the end of a record's header or of its body.
func FuzzRecordReader(f *testing.F) {
	f.Add([]byte("\x16\x03\x01\x00\x05hello\x17\x03\x03\x00\x02hi"), []byte{3, 1, 200})
	f.Add([]byte("\x16\x03\x01\x00\x00\x15\x03\x03\x00\x02\x02\x00"), []byte{})
	f.Add(bytes.Repeat([]byte{0x17, 3, 3, 0xff, 0xff}, 3), []byte{7})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		rr := &recordReader{Conn: &chunkConn{in: in, sizes: sizes}}
		cuts := recordCuts(in)
		var out []byte
		buf := make([]byte, 1<<17)
		for i := 0; ; i++ {
			want := len(buf)
			if len(sizes) > 0 {
				want = min(int(sizes[i%len(sizes)])*97+1, len(buf)) // the reader's callers ask for various sizes
			}
			start := len(out)
			n, err := rr.Read(buf[:want])
			out = append(out, buf[:n]...)
			for off := start + 1; off < len(out); off++ {
				if cuts[off] {
					t.Fatalf("read [%d,%d) crosses a record's header or body end at %d", start, len(out), off)
				}
			}
			if err != nil || n == 0 {
				break
			}
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("read %d bytes %x, want %d bytes %x", len(out), out, len(in), in)
		}
	})
}

// recordCuts returns the offsets in b where a record's header or body
// ends, by the headers' lengths alone.
func recordCuts(b []byte) map[int]bool {
	cuts := map[int]bool{}
	for off := range recordEnds(b) {
		cuts[off] = true
		cuts[off+recordHeaderLen] = true
	}
	return cuts
}

// handshakeOutcome runs a TLS server handshake over in, read in chunks of
// sizes, directly or through recordReader, and returns its error (nil
// cannot happen: in holds no client that answers) and how much of in was
// read.
func handshakeOutcome(in, sizes []byte, exact bool, cfg *tls.Config) (string, int) {
	c := &chunkConn{in: in, sizes: sizes}
	var conn net.Conn = c
	if exact {
		conn = &recordReader{Conn: c}
	}
	err := tls.Server(conn, cfg).Handshake()
	return fmt.Sprint(err), c.read
}

// FuzzKernelHandshakeReader: crypto/tls reading a client's bytes through
// recordReader ends the handshake exactly as it does reading them
// directly (the same error), and having read only whole records (or up to
// where it stopped in the record it failed on), never past it.
func FuzzKernelHandshakeReader(f *testing.F) {
	certFile, keyFile := writeTestCert(f, "*.apps.test")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		f.Fatal(err)
	}
	// X25519 alone: under the fuzzer's coverage counters ML-KEM's key
	// exchange took seconds per input.
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"},
		SessionTicketsDisabled: true, CurvePreferences: []tls.CurveID{tls.X25519}}
	// Seeds: real ClientHellos (TLS 1.3 and 1.2 clients), alone and
	// followed by more records, and a few broken ones.
	for _, max := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		hello := clientHello(f, max)
		f.Add(hello, []byte{})
		f.Add(append(bytes.Clone(hello), "\x14\x03\x03\x00\x01\x01\x17\x03\x03\x00\x05hello"...), []byte{1, 5, 255})
		f.Add(hello[:len(hello)/2], []byte{3})
	}
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), []byte{})
	f.Add([]byte("\x16\x03\x01\x40\x01"), []byte{})
	f.Fuzz(func(t *testing.T, in, sizes []byte) {
		direct, _ := handshakeOutcome(in, sizes, false, cfg)
		exact, read := handshakeOutcome(in, sizes, true, cfg)
		if direct != exact {
			t.Fatalf("through recordReader: %s; directly: %s", exact, direct)
		}
		// What was read ends at a record boundary, or inside the last
		// record begun (the one crypto/tls gave up on).
		ends := recordEnds(in)
		last := 0
		for off := range ends {
			if off <= read && off > last {
				last = off
			}
		}
		if read != last {
			next := last + recordHeaderLen
			if last+recordHeaderLen <= len(in) {
				next = last + recordHeaderLen + int(binary.BigEndian.Uint16(in[last+3:]))
			}
			if read > next {
				t.Fatalf("read %d bytes, past the record [%d,%d)", read, last, next)
			}
		}
	})
}

// clientHello returns the first flight of a crypto/tls client with
// version max.
func clientHello(tb testing.TB, max uint16) []byte {
	cc, sc := net.Pipe()
	defer cc.Close()
	go tls.Client(cc, &tls.Config{ServerName: "blog.apps.test", MaxVersion: max, NextProtos: []string{"h2", "http/1.1"}}).Handshake()
	hdr := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(sc, hdr); err != nil {
		tb.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(sc, body); err != nil {
		tb.Fatal(err)
	}
	sc.Close()
	return append(hdr, body...)
}

// FuzzKeyLogLine: parseKeyLogLine never panics, refuses what is not a key
// log line, and reads back exactly what crypto/tls writes.
func FuzzKeyLogLine(f *testing.F) {
	f.Add([]byte("SERVER_TRAFFIC_SECRET_0 " + fmt.Sprintf("%x %x\n", bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 48))))
	f.Add([]byte("CLIENT_RANDOM 00 11\n"))
	f.Add([]byte("X  \n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		label, secret, err := parseKeyLogLine(line)
		if err != nil {
			return
		}
		f := bytes.Split(bytes.TrimSuffix(line, []byte("\n")), []byte(" "))
		again := fmt.Appendf(nil, "%s %s %x\n", label, bytes.ToLower(f[1]), secret)
		if !bytes.Equal(bytes.ToLower(line), bytes.ToLower(again)) {
			t.Fatalf("parsed %q as %q %x", line, label, secret)
		}
	})
}
