package tlsedge

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// fileCert is an operator's certificate and key, reloaded when either
// file's modification time or size changes.
type fileCert struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
	stamp             string
}

func loadFileCert(certFile, keyFile string) (*fileCert, error) {
	fc := &fileCert{certFile: certFile, keyFile: keyFile}
	if err := fc.load(); err != nil {
		return nil, err
	}
	return fc, nil
}

// stampOf identifies the files' versions.
func (fc *fileCert) stampOf() (string, error) {
	var s string
	for _, p := range []string{fc.certFile, fc.keyFile} {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%d;", fi.ModTime().UnixNano(), fi.Size())
	}
	return s, nil
}

func (fc *fileCert) load() error {
	stamp, err := fc.stampOf()
	if err != nil {
		return fmt.Errorf("tls files: %w", err)
	}
	c, err := tls.LoadX509KeyPair(fc.certFile, fc.keyFile)
	fc.stamp = stamp // a pair that fails is retried when it changes again
	if err != nil {
		return fmt.Errorf("tls files %s and %s: %w", fc.certFile, fc.keyFile, err)
	}
	fc.cert.Store(&c)
	return nil
}

func (fc *fileCert) current() *tls.Certificate { return fc.cert.Load() }

// changed reports whether the files differ from the loaded ones.
func (fc *fileCert) changed() bool {
	s, err := fc.stampOf()
	return err == nil && s != fc.stamp
}

// watchFiles reloads the files when they change; a pair that does not load
// (a half-written renewal) keeps the previous one and is retried.
func (m *Manager) watchFiles() {
	defer m.done.Done()
	t := time.NewTicker(m.cfg.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		if !m.files.changed() {
			continue
		}
		if err := m.files.load(); err != nil {
			m.logger.Error("certificate files changed but do not load: still serving the previous ones", "err", err)
			continue
		}
		m.logger.Info("certificate files reloaded", "cert", m.cfg.CertFile)
	}
}
