// Package integration holds pgaccel's end-to-end tests: a real origin
// Postgres started by the pgtest harness, the proxy in front of it, and real
// clients (pgx, psql) talking to both, compared message for message.
//
// integration may import every pgaccel package; nothing imports it.
package integration
