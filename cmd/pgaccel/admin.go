package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pgaccel/pgaccel/admin"
	"github.com/pgaccel/pgaccel/catalog"
)

// adminClient talks to a running pgaccel's admin port.
type adminClient struct {
	base  string
	token string
	http  *http.Client
}

// adminFlags adds the flags that find the admin port: -c (its config:
// admin.listen and admin.token), -admin and -token (which win). Only the
// admin block of the config is read, so the rest of it (an origin.dsn
// naming an ${env:...} unset here) does not matter. A config named with -c
// must be readable; the default pgaccel.yaml may be missing, and then the
// default address is used.
func adminFlags(fs *flag.FlagSet) func() (*adminClient, error) {
	cfgPath := fs.String("c", "pgaccel.yaml", "config file of the running pgaccel, for admin.listen and admin.token (the default is used only when it exists)")
	addr := fs.String("admin", "", "admin address host:port (default: admin.listen of the config, else "+catalog.DefaultAdminListen+")")
	token := fs.String("token", os.Getenv("PGACCEL_ADMIN_TOKEN"), "bearer token (default $PGACCEL_ADMIN_TOKEN, else admin.token of the config)")
	return func() (*adminClient, error) {
		c := &adminClient{base: *addr, token: *token, http: &http.Client{Timeout: 30 * time.Second}}
		explicit := flagGiven(fs, "c")
		read := explicit
		if !read && (c.base == "" || c.token == "") {
			_, err := os.Stat(*cfgPath)
			read = !errors.Is(err, os.ErrNotExist)
		}
		if read {
			a, err := catalog.LoadAdmin(*cfgPath)
			if err != nil {
				var ve *catalog.ValidationError
				if errors.As(err, &ve) {
					return nil, fmt.Errorf("the admin settings of %s are invalid (or give -admin and -token):\n%w", *cfgPath, err)
				}
				return nil, fmt.Errorf("cannot read %s for the admin address (-c): %w", *cfgPath, err)
			}
			if c.base == "" {
				c.base = a.Listen
			}
			if c.token == "" {
				c.token = a.Token
			}
		}
		if c.base == "" {
			c.base = catalog.DefaultAdminListen
		}
		if !strings.Contains(c.base, "://") {
			c.base = "http://" + c.base
		}
		return c, nil
	}
}

// flagGiven reports whether the flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseInterspersed parses args with fs, accepting flags after the
// arguments too (pgaccel refresh orders -c f.yaml), and returns the
// arguments. A "--" ends the flags: everything after it is an argument.
// A bad flag is exit status 2 (the flag package has printed what is wrong
// and the usage); -h is flag.ErrHelp.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			return nil, err
		} else if err != nil {
			return nil, exitError(2)
		}
		consumed := len(args) - fs.NArg()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(rest, fs.Args()...), nil
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// do sends a request and decodes a JSON answer into out; an answer that
// is not 2xx is an error with its message.
func (c *adminClient) do(method, path string, out any) error {
	return c.doBody(method, path, nil, out)
}

// doBody is do with a JSON body (none when nil).
func (c *adminClient) doBody(method, path string, in any, out any) error {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the admin port (is pgaccel running? set -admin): %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var m struct{ Message string }
		if json.Unmarshal(body, &m) == nil && m.Message != "" {
			return fmt.Errorf("%s: %s", resp.Status, m.Message)
		}
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

func cmdRefresh(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("refresh", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := adminFlags(fs)
	full := fs.Bool("full", false, "reload in full: an append dataset's acceleration is replaced by every row the source has, as at its first load, "+
		"so rows deleted or truncated there since are gone (for other datasets, an ordinary refresh)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel refresh [flags] DATASET...\n\nStarts a refresh of each DATASET in a running pgaccel (a refresh in progress is replaced). Flags may come before or after the datasets.")
		fs.PrintDefaults()
	}
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Fprintln(stderr, "pgaccel refresh: name the dataset to refresh, as in: pgaccel refresh orders")
		fs.Usage()
		return exitError(2)
	}
	c, err := client()
	if err != nil {
		return err
	}
	failed := 0
	for _, name := range names {
		var m struct{ Message string }
		var body any
		if *full {
			body = map[string]string{"refresh_mode": catalog.RefreshFull}
		}
		if err := c.doBody(http.MethodPost, "/v1/datasets/"+url.PathEscape(name)+"/acceleration/refresh", body, &m); err != nil {
			if len(names) == 1 {
				return err
			}
			fmt.Fprintf(stderr, "pgaccel: refresh %s: %v\n", name, err)
			failed++
			continue
		}
		fmt.Fprintln(stdout, m.Message)
	}
	if failed > 0 {
		return exitError(1)
	}
	return nil
}

func cmdStatus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := adminFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel status [flags]\n\nPrints the datasets of a running pgaccel: status, rows, last and next refresh, error.")
		fs.PrintDefaults()
	}
	extra, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(extra) != 0 {
		return fmt.Errorf("status takes no arguments, got %q", strings.Join(extra, " "))
	}
	c, err := client()
	if err != nil {
		return err
	}
	rows, err := c.datasets()
	if err != nil {
		return err
	}
	return printStatus(stdout, rows)
}

// datasets fetches the datasets with their status.
func (c *adminClient) datasets() ([]admin.DatasetStatus, error) {
	var rows []admin.DatasetStatus
	if err := c.do(http.MethodGet, "/v1/datasets?status=true", &rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// printStatus prints the datasets as the table of pgaccel status.
func printStatus(w io.Writer, rows []admin.DatasetStatus) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DATASET\tMODE\tSTATUS\tROWS\tLAST REFRESH\tNEXT REFRESH\tERROR")
	stamp := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	}
	for _, r := range rows {
		mode, count := r.RefreshMode, "-"
		if !r.AccelerationEnabled {
			mode = "not accelerated"
		}
		if r.Rows != nil {
			count = strconv.FormatInt(*r.Rows, 10)
		}
		if p := r.RefreshStatus; p != nil {
			count += " (refreshing: " + strconv.FormatInt(p.RowsLoaded, 10)
			if p.RowsEstimated != nil {
				count += " of ~" + strconv.FormatInt(*p.RowsEstimated, 10)
			}
			count += ")"
		}
		errText := r.Error
		if len(errText) > 120 {
			errText = errText[:117] + "..."
		}
		if errText == "" {
			errText = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, mode, r.Status, count, stamp(r.LastRefresh), stamp(r.NextRefresh), errText)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Change streams of changes datasets.
	for _, r := range rows {
		if rp := r.Replication; rp != nil {
			state := "streaming"
			if !rp.Streaming {
				state = "not streaming (reconnecting)"
			}
			if _, err := fmt.Fprintf(w, "%s: %s from slot %s, applied %s, lag %d ms (%s of WAL); %d transactions applied, %d rebuilds, %d reconnects\n",
				r.Name, state, rp.Slot, rp.AppliedLSN, rp.LagMs, humanBytes(rp.LagBytes), rp.Transactions, rp.Rebuilds, rp.Reconnects); err != nil {
				return err
			}
		}
	}
	// What the status alone does not say.
	for _, r := range rows {
		for _, n := range r.Notes {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Name, n); err != nil {
				return err
			}
		}
	}
	// Columns left out of an acceleration: reads of them go to the origin.
	for _, r := range rows {
		for _, c := range r.ColumnsNotAccelerated {
			if _, err := fmt.Fprintf(w, "%s.%s (%s) is not accelerated: %s\n", r.Name, c.Name, c.Type, c.Reason); err != nil {
				return err
			}
		}
	}
	return nil
}
