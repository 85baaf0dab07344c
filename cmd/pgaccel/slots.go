package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/pgaccel/pgaccel/refresh"
)

// cmdSlots lists the origin's replication slots named like pgaccel's
// (through a running pgaccel's admin port), or drops one no dataset uses.
func cmdSlots(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("slots", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := adminFlags(fs)
	yes := fs.Bool("yes", false, "drop without asking")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: pgaccel slots [flags]            list the origin's replication slots named like pgaccel's
       pgaccel slots drop NAME [flags]  drop one that no dataset streams from (asks first; -yes does not)

A slot no dataset streams from (a changes dataset removed from the config,
renamed, or given another slot) keeps WAL at the origin until it is dropped.`)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	list, drop := len(rest) == 0, len(rest) == 2 && rest[0] == "drop"
	if !list && !drop {
		fs.Usage()
		return exitError(2)
	}
	c, err := client()
	if err != nil {
		return err
	}
	if list {
		slots, err := c.slots()
		if err != nil {
			return err
		}
		return printSlots(stdout, slots)
	}
	name := rest[1]
	if !*yes {
		slots, err := c.slots()
		if err != nil {
			return err
		}
		i := slices.IndexFunc(slots, func(s refresh.SlotStatus) bool { return s.Name == name })
		if i < 0 {
			return fmt.Errorf("the origin has no replication slot %s named like pgaccel's (pgaccel slots lists them)", name)
		}
		fmt.Fprintf(stdout, "Drop replication slot %s (it holds %s of WAL at the origin)? A dataset that streams from it later rebuilds from a new snapshot. [y/N] ", name, humanBytes(slots[i].RetainedBytes))
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not dropped.")
			return exitError(1)
		}
	}
	var m struct{ Message string }
	if err := c.do(http.MethodDelete, "/v1/replication/slots/"+url.PathEscape(name), &m); err != nil {
		return err
	}
	fmt.Fprintln(stdout, m.Message)
	return nil
}

// slots lists the origin's replication slots named like pgaccel's.
func (c *adminClient) slots() ([]refresh.SlotStatus, error) {
	var slots []refresh.SlotStatus
	if err := c.do(http.MethodGet, "/v1/replication/slots", &slots); err != nil {
		return nil, err
	}
	return slots, nil
}

// printSlots prints slots as a table.
func printSlots(w io.Writer, slots []refresh.SlotStatus) error {
	if len(slots) == 0 {
		_, err := fmt.Fprintln(w, "The origin has no replication slot named like pgaccel's.")
		return err
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tUSED BY\tACTIVE\tWAL STATUS\tRETAINED WAL")
	for _, s := range slots {
		used := s.Dataset
		switch {
		case s.Orphan():
			used = "nothing (orphan: pgaccel slots drop " + s.Name + ")"
		case used == "":
			used = "another pgaccel instance (" + s.Instance + ")"
		}
		ws := s.WALStatus
		if ws == "" {
			ws = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", s.Name, used, s.Active, ws, humanBytes(s.RetainedBytes))
	}
	return tw.Flush()
}

// humanBytes renders n bytes with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
