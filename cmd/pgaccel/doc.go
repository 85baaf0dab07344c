// Command pgaccel runs the pgaccel proxy.
//
//	pgaccel run -c pgaccel.yaml       serve clients until SIGINT/SIGTERM
//	pgaccel validate -c pgaccel.yaml  check a config, print every problem
//	pgaccel demo                      throwaway origin + proxy, prints a psql line
//	pgaccel version                   print the version
//
// It only parses flags, wires the packages together and handles signals.
package main
