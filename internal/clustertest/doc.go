// Package clustertest holds `make test-cluster` (issue 26, point 8;
// SCALING.md §9 B): two real `gantry serve` processes (bin/gantry) on
// loopback sharing one throwaway PostgreSQL database, each with its own
// data folder, the real sandbox and a real git server, killed and paused
// by their process ids. The tests skip when GANTRY_TEST_DATABASE_URL is
// unset (scripts/with-postgres sets it).
package clustertest
