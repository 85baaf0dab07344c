// Command pgaccel runs the pgaccel proxy.
//
//	pgaccel run -c pgaccel.yaml                serve clients until SIGINT/SIGTERM
//	pgaccel validate -c pgaccel.yaml [-origin] check a config (and its datasets at the origin), print every problem
//	pgaccel status [-c pgaccel.yaml]           the datasets of a running pgaccel, through its admin port
//	pgaccel refresh DATASET... [flags]         start refreshes in a running pgaccel
//	pgaccel demo                               throwaway origin + proxy, prints how to try it
//	pgaccel version                            print the version
//
// It only parses flags, wires the packages together and handles signals:
// SIGINT and SIGTERM drain and stop `run`; SIGHUP is logged and ignored
// (the configuration is not reloaded).
package main
