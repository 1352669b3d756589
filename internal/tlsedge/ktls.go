package tlsedge

// Kernel TLS (kTLS): the handshake in crypto/tls, the record layer in the
// kernel. See docs/architecture.md, "HTTPS and the event loops".
//
// KernelHandshake runs a TLS 1.3 server handshake with crypto/tls on a
// plain TCP connection so that, when it returns, everything the two sides
// need to go on without crypto/tls is known and nothing past the handshake
// has been read or written:
//   - the traffic secrets come from the connection's own KeyLogWriter (a
//     clone of the listener's tls.Config per connection), the keys and IVs
//     from them by HKDF-Expand-Label (RFC 8446 7.1, x/crypto/hkdf): no
//     cryptography of our own;
//   - session tickets are off, so the server's first application record
//     after the handshake is its first record under the application
//     secret (sequence number 0), and so is the client's;
//   - crypto/tls reads through recordReader, which never returns bytes past
//     the end of the record being read, so the client's first application
//     records (a request sent right behind its Finished) are still in the
//     socket for the kernel to decrypt.
//
// The result, KTLSState, gives the kernel's crypto_info structures for
// setsockopt(SOL_TLS, TLS_TX / TLS_RX) after setsockopt(TCP_ULP, "tls").

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"sync"

	"golang.org/x/crypto/hkdf"
)

// The kernel's constants (linux/tls.h).
const (
	solTLS              = 282 // SOL_TLS
	tlsTX               = 1   // TLS_TX
	tlsRX               = 2   // TLS_RX
	tls13Version        = 0x0304
	cipherAESGCM128     = 51 // TLS_CIPHER_AES_GCM_128
	cipherAESGCM256     = 52 // TLS_CIPHER_AES_GCM_256
	cipherChaCha20Poly  = 54 // TLS_CIPHER_CHACHA20_POLY1305
	recordHeaderLen     = 5
	maxRecordCiphertext = 1<<14 + 256 // RFC 8446 5.2
)

// ErrNotKernelTLS is returned by KernelHandshake for a connection that
// completed its handshake but that the kernel's record layer cannot take
// (TLS 1.2: its keys would need the TLS 1.2 PRF, which crypto/tls keeps to
// itself). The *tls.Conn it returns with it serves the connection as usual.
var ErrNotKernelTLS = errors.New("kernel TLS: not a TLS 1.3 connection with a cipher the kernel has")

// RecordState is one direction of a TLS 1.3 connection after the
// handshake: the AEAD key, the 12-byte static IV, and the sequence number
// of the next record.
type RecordState struct {
	Key, IV []byte
	Seq     uint64
}

// KTLSState is what the kernel needs to take a connection's record layer
// over from crypto/tls: the cipher suite, and the server's sending (TX) and
// receiving (RX) states.
type KTLSState struct {
	CipherSuite uint16
	TX, RX      RecordState
}

// CryptoInfo returns the kernel's crypto_info structure for one direction
// (struct tls12_crypto_info_aes_gcm_128, _aes_gcm_256 or
// _chacha20_poly1305 of linux/tls.h, despite the names also TLS 1.3's):
// version and cipher (u16 each, host order), then for AES-GCM the IV's
// last 8 bytes, the key, the IV's first 4 bytes ("salt") and the
// big-endian record sequence number; for ChaCha20-Poly1305 the whole
// 12-byte IV, the key and the sequence number. The kernel forms each
// record's nonce as salt||iv XOR the sequence number, RFC 8446's nonce.
func (s *KTLSState) CryptoInfo(r RecordState) ([]byte, error) {
	var b []byte
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], r.Seq)
	switch s.CipherSuite {
	case tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384:
		cipher := uint16(cipherAESGCM128)
		if s.CipherSuite == tls.TLS_AES_256_GCM_SHA384 {
			cipher = cipherAESGCM256
		}
		b = binary.NativeEndian.AppendUint16(b, tls13Version)
		b = binary.NativeEndian.AppendUint16(b, cipher)
		b = append(b, r.IV[4:12]...)
		b = append(b, r.Key...)
		b = append(b, r.IV[:4]...)
		b = append(b, seq[:]...)
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		b = binary.NativeEndian.AppendUint16(b, tls13Version)
		b = binary.NativeEndian.AppendUint16(b, cipherChaCha20Poly)
		b = append(b, r.IV...)
		b = append(b, r.Key...)
		b = append(b, seq[:]...)
	default:
		return nil, ErrNotKernelTLS
	}
	return b, nil
}

// suiteParams returns a TLS 1.3 cipher suite's hash and key length.
func suiteParams(suite uint16) (func() hash.Hash, int, bool) {
	switch suite {
	case tls.TLS_AES_128_GCM_SHA256:
		return sha256.New, 16, true
	case tls.TLS_AES_256_GCM_SHA384:
		return sha512.New384, 32, true
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return sha256.New, 32, true
	}
	return nil, 0, false
}

// expandLabel is HKDF-Expand-Label(secret, label, "", n) (RFC 8446 7.1).
func expandLabel(h func() hash.Hash, secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0) // empty context
	out := make([]byte, n)
	if _, err := io.ReadFull(hkdf.Expand(h, secret, info), out); err != nil {
		return nil, err
	}
	return out, nil
}

// trafficState derives a direction's key and IV from its application
// traffic secret, at sequence number 0.
func trafficState(suite uint16, secret []byte) (RecordState, error) {
	h, keyLen, ok := suiteParams(suite)
	if !ok {
		return RecordState{}, ErrNotKernelTLS
	}
	key, err := expandLabel(h, secret, "key", keyLen)
	if err != nil {
		return RecordState{}, err
	}
	iv, err := expandLabel(h, secret, "iv", 12)
	if err != nil {
		return RecordState{}, err
	}
	return RecordState{Key: key, IV: iv}, nil
}

// KernelHandshake runs the server side of a TLS handshake on raw with a
// per-connection clone of cfg (session tickets off, its own
// KeyLogWriter), reading record by record. For a TLS 1.3 connection with
// a cipher the kernel has, it returns the state to hand to the kernel; the
// tls.Conn must then not be used to read or write (the kernel's record
// layer continues where it stopped). For any other completed handshake it
// returns the tls.Conn and ErrNotKernelTLS: serve it as usual.
func KernelHandshake(raw net.Conn, cfg *tls.Config) (*tls.Conn, *KTLSState, error) {
	keys := &keyLog{}
	c := cfg.Clone()
	c.SessionTicketsDisabled = true
	c.KeyLogWriter = keys
	tc := tls.Server(&recordReader{Conn: raw}, c)
	if err := tc.Handshake(); err != nil {
		return nil, nil, err
	}
	st := tc.ConnectionState()
	if st.Version != tls.VersionTLS13 {
		return tc, nil, ErrNotKernelTLS
	}
	server, client, err := keys.secrets()
	if err != nil {
		return nil, nil, err
	}
	s := &KTLSState{CipherSuite: st.CipherSuite}
	if s.TX, err = trafficState(st.CipherSuite, server); err != nil {
		return tc, nil, err
	}
	if s.RX, err = trafficState(st.CipherSuite, client); err != nil {
		return tc, nil, err
	}
	return tc, s, nil
}

// keyLog is a connection's KeyLogWriter: it keeps the application traffic
// secrets crypto/tls reports (NSS key log lines, one per Write).
type keyLog struct {
	mu             sync.Mutex
	server, client []byte
	err            error
}

// Write takes one key log line: "LABEL <client random hex> <secret hex>\n".
func (k *keyLog) Write(p []byte) (int, error) {
	label, secret, err := parseKeyLogLine(p)
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err != nil:
		k.err = err
	case label == "SERVER_TRAFFIC_SECRET_0":
		k.server = secret
	case label == "CLIENT_TRAFFIC_SECRET_0":
		k.client = secret
	}
	return len(p), nil
}

func (k *keyLog) secrets() (server, client []byte, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err != nil {
		return nil, nil, k.err
	}
	if k.server == nil || k.client == nil {
		return nil, nil, errors.New("kernel TLS: crypto/tls reported no application traffic secrets")
	}
	return k.server, k.client, nil
}

// parseKeyLogLine reads an NSS key log line: a label, a 32-byte client
// random and a secret, in hex, separated by single spaces and ended by a
// newline.
func parseKeyLogLine(p []byte) (string, []byte, error) {
	line, ok := bytes.CutSuffix(p, []byte("\n"))
	f := bytes.Split(line, []byte(" "))
	if !ok || len(f) != 3 || len(f[0]) == 0 || len(f[1]) != 64 {
		return "", nil, fmt.Errorf("kernel TLS: unexpected key log line (%d bytes)", len(p))
	}
	if _, err := hex.DecodeString(string(f[1])); err != nil {
		return "", nil, fmt.Errorf("kernel TLS: key log line: client random: %w", err)
	}
	secret, err := hex.DecodeString(string(f[2]))
	if err != nil || len(secret) < 32 || len(secret) > 64 {
		return "", nil, fmt.Errorf("kernel TLS: key log line: bad secret (%d hex digits)", len(f[2]))
	}
	return string(f[0]), secret, nil
}

// recordReader is the connection crypto/tls reads the handshake through:
// no Read returns bytes past the end of the TLS record it is in (crypto/tls
// reads ahead when it can, and would keep the client's first application
// records in its own buffer, where the kernel never sees them). It reads
// at most a record's 5-byte header, then at most the rest of that record.
type recordReader struct {
	net.Conn
	hdr  [recordHeaderLen]byte
	nhdr int // header bytes of the current record read so far
	left int // body bytes of the current record not read yet
}

func (r *recordReader) Read(p []byte) (int, error) {
	if r.nhdr == recordHeaderLen && r.left == 0 {
		r.nhdr = 0 // the record is complete: the next one starts
	}
	limit := r.left
	if r.nhdr < recordHeaderLen {
		limit = recordHeaderLen - r.nhdr
	}
	if len(p) > limit {
		p = p[:limit]
	}
	n, err := r.Conn.Read(p)
	if r.nhdr < recordHeaderLen {
		copy(r.hdr[r.nhdr:], p[:n])
		r.nhdr += n
		if r.nhdr == recordHeaderLen {
			r.left = int(binary.BigEndian.Uint16(r.hdr[3:]))
		}
	} else {
		r.left -= n
	}
	return n, err
}

// KernelTLSFallbackCost is what HTTPS costs without the event loops, from
// bench/tlsbench (README, Benchmarks).
const KernelTLSFallbackCost = "about 1.0-1.25x nginx's CPU per request and 0.5-1.0x its requests per second for static files over HTTPS"

// LogKernelTLS writes the one start-up line about HTTPS and kernel TLS:
// without it (this kernel lacks it), what is missing and what that costs.
func LogKernelTLS(logger *slog.Logger) {
	k := KernelTLS()
	if !k.Available {
		logger.Warn("HTTPS without kernel TLS: every HTTPS request takes net/http's path through crypto/tls instead of the edge's event loops",
			"missing", k.Missing, "cost", KernelTLSFallbackCost)
		return
	}
	logger.Info("kernel TLS available; HTTPS requests still take net/http's path through crypto/tls (the event loops do not adopt kernel TLS connections yet)",
		"cost", KernelTLSFallbackCost)
}
