package config

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Replicas (issue 26; SCALING.md §2, T1): several `gantry serve` processes
// sharing one PostgreSQL database, each named by its node id.

// Roles of a replica (GANTRY_ROLES).
const (
	RoleAPI     = "api"     // the UI and the API on the public host
	RoleEdge    = "edge"    // live sites and apps on the live domain
	RoleBuilder = "builder" // claims and runs builds
	RoleRunner  = "runner"  // runs server apps
)

// Defaults of the replica settings.
const (
	DefaultRoles = "api,edge,builder,runner"
	DefaultLease = 30 * time.Second
	// NodeIDFile holds the generated node id in the data folder.
	NodeIDFile = "node-id"
)

// nodeIDPattern is what a node id may be: it names the replica in the
// database (builds' claimed_by) and in logs.
var nodeIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// checkReplica validates the replica settings: the node id's form, the
// peer address, the roles and the lease. A replica (--peer-addr set)
// needs PostgreSQL and a secret key every replica shares.
func (c *Config) checkReplica(v func(string) string, bad badSetting) {
	if c.NodeID = strings.ToLower(v("node-id")); c.NodeID != "" && !nodeIDPattern.MatchString(c.NodeID) {
		bad("node-id", "%q must be 1 to 63 lowercase letters, digits and hyphens, starting with a letter or digit", c.NodeID)
	}
	if c.PeerAddr = v("peer-addr"); c.PeerAddr != "" {
		if host, port, err := net.SplitHostPort(c.PeerAddr); err != nil || host == "" || port == "" {
			bad("peer-addr", "%q must be host:port (e.g. 10.0.0.5:8081), the address the other replicas reach this one at", c.PeerAddr)
		}
		if !strings.Contains(c.DatabaseURL, "://") || strings.HasPrefix(c.DatabaseURL, "sqlite://") {
			bad("peer-addr", "makes this a replica, and replicas share one PostgreSQL database: set GANTRY_DATABASE_URL=postgres://… (a SQLite file belongs to one process)")
		}
		if !c.secretKeySet {
			bad("secret-key", "must be set, the same on every replica, when --peer-addr makes this a replica (each would generate its own otherwise)")
		}
	}
	c.Roles = nil
	for _, r := range strings.Split(v("roles"), ",") {
		switch r = strings.ToLower(strings.TrimSpace(r)); r {
		case "":
		case RoleAPI, RoleEdge, RoleBuilder, RoleRunner:
			if !slices.Contains(c.Roles, r) {
				c.Roles = append(c.Roles, r)
			}
		default:
			bad("roles", "%q is not a role: use api, edge, builder and runner, comma-separated", r)
		}
	}
	if !slices.Contains(c.Roles, RoleRunner) {
		// A build goes live only once its app answered on the replica
		// that built it: a replica without runner could not finish a
		// server app's deployment.
		bad("roles", "must include runner for now: api, edge and builder may be left out (a replica without api or edge answers 421 on that traffic, one without builder builds nothing)")
	}
	if d, err := time.ParseDuration(v("lease")); err != nil {
		bad("lease", "%q is not a duration (e.g. 30s)", v("lease"))
	} else if d < time.Second || d > 10*time.Minute {
		bad("lease", "must be from 1s to 10m")
	} else {
		c.Lease = d
	}
}

// Replica reports whether this process is one of several replicas
// (--peer-addr set).
func (c *Config) Replica() bool { return c.PeerAddr != "" }

// HasRole reports whether this replica has role r.
func (c *Config) HasRole(r string) bool { return slices.Contains(c.Roles, r) }

// prepareNodeID reads the node id from <data-dir>/node-id, generating it
// there once, unless --node-id set it.
func (c *Config) prepareNodeID() error {
	if c.NodeID != "" {
		return nil
	}
	path := filepath.Join(c.DataDir, NodeIDFile)
	id, err := readOrCreate(path, "node id", func() (string, error) {
		var r [6]byte
		_, err := rand.Read(r[:])
		return "node-" + hex.EncodeToString(r[:]), err
	})
	if err != nil {
		return err
	}
	if !nodeIDPattern.MatchString(id) {
		return fmt.Errorf("node id in %s is not a valid name (%q): fix or delete it", path, id)
	}
	c.NodeID = id
	return nil
}
