package main

import (
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
// admin.listen and admin.token), -admin and -token (which win).
func adminFlags(fs *flag.FlagSet) func() (*adminClient, error) {
	cfgPath := fs.String("c", "pgaccel.yaml", "config file of the running pgaccel (for admin.listen and admin.token), used when it exists")
	addr := fs.String("admin", "", "admin address host:port (default: admin.listen of the config, else "+catalog.DefaultAdminListen+")")
	token := fs.String("token", os.Getenv("PGACCEL_ADMIN_TOKEN"), "bearer token (default $PGACCEL_ADMIN_TOKEN, else admin.token of the config)")
	return func() (*adminClient, error) {
		c := &adminClient{base: *addr, token: *token, http: &http.Client{Timeout: 30 * time.Second}}
		if c.base == "" || c.token == "" {
			if _, err := os.Stat(*cfgPath); err == nil {
				cfg, err := catalog.Load(*cfgPath)
				if err != nil {
					return nil, fmt.Errorf("read %s for the admin address: %w", *cfgPath, err)
				}
				if c.base == "" {
					c.base = cfg.Admin.Listen
				}
				if c.token == "" {
					c.token = cfg.Admin.Token
				}
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

// do sends a request and decodes a JSON answer into out; an answer that
// is not 2xx is an error with its message.
func (c *adminClient) do(method, path string, out any) error {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return err
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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel refresh [flags] DATASET\n\nStarts a refresh of DATASET in a running pgaccel (a refresh in progress is replaced).")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitError(2)
	}
	c, err := client()
	if err != nil {
		return err
	}
	var m struct{ Message string }
	if err := c.do(http.MethodPost, "/v1/datasets/"+url.PathEscape(fs.Arg(0))+"/acceleration/refresh", &m); err != nil {
		return err
	}
	fmt.Fprintln(stdout, m.Message)
	return nil
}

func cmdStatus(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := adminFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("status takes no arguments")
	}
	c, err := client()
	if err != nil {
		return err
	}
	var rows []admin.DatasetStatus
	if err := c.do(http.MethodGet, "/v1/datasets?status=true", &rows); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
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
	return tw.Flush()
}
