package main

import (
	"fmt"
	"strings"

	"github.com/pgaccel/pgaccel/integration/corpora"
)

// query is one TPC-H query (corpora.TPCH).
type query struct {
	name string
	sql  string
}

// tpchQueries are the 22 queries for scale factor sf.
func tpchQueries(sf float64) []query {
	var out []query
	for _, q := range corpora.TPCH(sf) {
		out = append(out, query{q.Name, q.SQL})
	}
	return out
}

// selectQueries picks the queries named in list ("1,3,Q5"; "" or "all"
// for every one).
func selectQueries(all []query, list string) ([]query, error) {
	if list == "" || list == "all" {
		return all, nil
	}
	byName := map[string]query{}
	for _, q := range all {
		byName[q.name] = q
	}
	var out []query
	for _, n := range strings.Split(list, ",") {
		n = strings.ToUpper(strings.TrimSpace(n))
		if !strings.HasPrefix(n, "Q") {
			n = "Q" + n
		}
		q, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("-queries: no query %q (Q1 to Q22)", n)
		}
		out = append(out, q)
	}
	return out, nil
}
