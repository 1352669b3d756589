package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/gantryhq/gantry/internal/acmedns"
	"github.com/gantryhq/gantry/internal/config"
	"github.com/gantryhq/gantry/internal/tlsedge"
)

// openTLS prepares HTTPS as cfg says (acme or files) and starts obtaining or
// watching certificates. httpPort is the bound port of the plain listener,
// where ACME HTTP-01 challenges arrive. allow decides which other names
// (custom domains) may have certificates on demand (nil refuses them
// all); allowIssue spends the budgets of new orders. Every error is one
// line naming the setting to fix.
//
// shared, when not nil (the database is PostgreSQL), holds certificates
// and certmagic's locks for every replica; the first start on it imports
// the certificate folder, so a server moving to it orders nothing anew.
func openTLS(ctx context.Context, cfg *config.Config, logger *slog.Logger, httpPort int, shared *tlsedge.SharedStorage,
	allow, allowIssue func(ctx context.Context, name string) error, onEvent func(tlsedge.Event)) (*tlsedge.Manager, error) {
	tc := tlsedge.Config{
		Mode:       cfg.TLS,
		LiveDomain: cfg.LiveDomain,
		PublicHost: cfg.PublicHost(),
		HTTPSPort:  cfg.PublicURL.Port(),
		Storage:    tlsedge.StorageDir(cfg.DataDir),
		CA:         cfg.ACMECA,
		Email:      cfg.ACMEEmail,
		Resolvers:  cfg.ACMEResolvers,
		HTTPPort:   httpPort,
		Allow:      allow,
		AllowIssue: allowIssue,
		OnEvent:    onEvent,
		CertFile:   cfg.TLSCert,
		KeyFile:    cfg.TLSKey,
		Logger:     logger,
		Debug:      cfg.LogLevel == "debug",
	}
	if cfg.TLS == config.TLSACME && shared != nil {
		n, err := tlsedge.ImportFolder(ctx, tc.Storage, shared)
		if err != nil {
			return nil, fmt.Errorf("move the certificates of %s into the database: %w", tc.Storage, err)
		}
		if n > 0 {
			logger.Info("certificates moved into the database, shared by every replica", "files", n, "from", tc.Storage)
		}
		tc.Shared = shared
	}
	if cfg.TLS == config.TLSACME {
		if cfg.ACMECARoot != "" {
			pem, err := os.ReadFile(cfg.ACMECARoot)
			if err != nil {
				return nil, fmt.Errorf("--acme-ca-root (GANTRY_ACME_CA_ROOT): %w: give a readable PEM file, or unset it for a public CA", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--acme-ca-root (GANTRY_ACME_CA_ROOT): %s holds no PEM certificate", cfg.ACMECARoot)
			}
			tc.CARoots = pool
		}
		dns, err := dnsProvider(ctx, cfg)
		if err != nil {
			return nil, err
		}
		tc.DNS = dns
	}
	m, err := tlsedge.New(tc)
	if err != nil {
		if cfg.TLS == config.TLSFiles {
			return nil, fmt.Errorf("--tls files: %w: set GANTRY_TLS_CERT and GANTRY_TLS_KEY to readable PEM files (the certificate chain and its key)", err)
		}
		return nil, err
	}
	if err := m.Open(ctx); err != nil {
		return nil, err
	}
	switch cfg.TLS {
	case config.TLSACME:
		logger.Info("HTTPS with ACME: certificates are requested in the background", "ca", cfg.ACMECA,
			"wildcard", "*."+cfg.LiveDomain, "dns_provider", cfg.DNSProvider, "storage", storageName(tc),
			"on_demand", allow != nil)
	case config.TLSFiles:
		logger.Info("HTTPS with certificate files, reloaded when they change", "cert", cfg.TLSCert, "key", cfg.TLSKey)
	}
	tlsedge.LogKernelTLS(logger)
	return m, nil
}

// checkTLS finds, before anything else starts, what openTLS would stop
// on: certificate files that do not load, an unreadable CA root, DNS
// provider credentials that are missing.
func checkTLS(ctx context.Context, cfg *config.Config) error {
	switch cfg.TLS {
	case config.TLSFiles:
		if _, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey); err != nil {
			return fmt.Errorf("--tls files: %w: set GANTRY_TLS_CERT and GANTRY_TLS_KEY to readable PEM files (the certificate chain and its key)", err)
		}
	case config.TLSACME:
		if cfg.ACMECARoot != "" {
			if _, err := os.ReadFile(cfg.ACMECARoot); err != nil {
				return fmt.Errorf("--acme-ca-root (GANTRY_ACME_CA_ROOT): %w: give a readable PEM file, or unset it for a public CA", err)
			}
		}
		if _, err := dnsProvider(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}

// dnsProvider builds the DNS-01 provider cfg names, with its credentials.
func dnsProvider(ctx context.Context, cfg *config.Config) (acmedns.Provider, error) {
	switch cfg.DNSProvider {
	case config.DNSRFC2136:
		return &acmedns.RFC2136{Server: cfg.RFC2136Server, KeyName: cfg.RFC2136KeyName, KeyAlg: cfg.RFC2136KeyAlg,
			Secret: cfg.RFC2136Secret}, nil
	case config.DNSCloudflare:
		return &acmedns.Cloudflare{APIToken: cfg.CloudflareAPIToken}, nil
	case config.DNSRoute53:
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		aws, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("--dns-provider route53: AWS configuration: %w", err)
		}
		if _, err := aws.Credentials.Retrieve(ctx); err != nil {
			return nil, fmt.Errorf("--dns-provider route53: no AWS credentials (%v): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance role", err)
		}
		return &acmedns.Route53{Config: aws, HostedZoneID: cfg.Route53HostedZoneID}, nil
	}
	return nil, fmt.Errorf("--dns-provider (GANTRY_DNS_PROVIDER): %q must be rfc2136, cloudflare or route53", cfg.DNSProvider)
}

// httpsErrorLog is the error log of the HTTPS server: as serve's, but a
// failed TLS handshake (a scanner, a client that refuses the certificate,
// a name refused a certificate on demand) is a debug line, not a warning
// anyone on the internet could fill the log with.
func httpsErrorLog(logger *slog.Logger) *log.Logger {
	return log.New(errorLogWriter{logger}, "", 0)
}

type errorLogWriter struct{ logger *slog.Logger }

func (w errorLogWriter) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	level := slog.LevelWarn
	if strings.Contains(msg, "TLS handshake error") {
		level = slog.LevelDebug
	}
	w.logger.Log(context.Background(), level, msg)
	return len(p), nil
}

// storageName says where certificates are kept, for the start-up line.
func storageName(tc tlsedge.Config) string {
	if tc.Shared != nil {
		return "database (shared by replicas)"
	}
	return tc.Storage
}
