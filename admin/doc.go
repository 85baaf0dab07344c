// Package admin serves pgaccel's HTTP admin port: /health, /v1/ready,
// /v1/datasets, on-demand refresh and /metrics on a private Prometheus
// registry.
//
// admin may import catalog and refresh; it must never import proxy.
package admin
