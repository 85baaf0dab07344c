package corpora

import (
	"fmt"
	"strings"
)

// TPCHTable is one TPC-H table: its Postgres DDL and primary key.
type TPCHTable struct {
	Name    string
	Columns []string // "name type", in COPY order
	PKey    []string
}

// TPCHTableDefs are the eight TPC-H tables (TPC-H 2.18 clause 1.4), with the
// types the accelerator keeps exactly: money is numeric(15,2), never the
// unconstrained numeric, which has no fixed-scale DuckDB type.
var TPCHTableDefs = []TPCHTable{
	{"region", []string{
		"r_regionkey integer NOT NULL",
		"r_name char(25) NOT NULL",
		"r_comment varchar(152)",
	}, []string{"r_regionkey"}},
	{"nation", []string{
		"n_nationkey integer NOT NULL",
		"n_name char(25) NOT NULL",
		"n_regionkey integer NOT NULL",
		"n_comment varchar(152)",
	}, []string{"n_nationkey"}},
	{"part", []string{
		"p_partkey integer NOT NULL",
		"p_name varchar(55) NOT NULL",
		"p_mfgr char(25) NOT NULL",
		"p_brand char(10) NOT NULL",
		"p_type varchar(25) NOT NULL",
		"p_size integer NOT NULL",
		"p_container char(10) NOT NULL",
		"p_retailprice numeric(15,2) NOT NULL",
		"p_comment varchar(23) NOT NULL",
	}, []string{"p_partkey"}},
	{"supplier", []string{
		"s_suppkey integer NOT NULL",
		"s_name char(25) NOT NULL",
		"s_address varchar(40) NOT NULL",
		"s_nationkey integer NOT NULL",
		"s_phone char(15) NOT NULL",
		"s_acctbal numeric(15,2) NOT NULL",
		"s_comment varchar(101) NOT NULL",
	}, []string{"s_suppkey"}},
	{"partsupp", []string{
		"ps_partkey integer NOT NULL",
		"ps_suppkey integer NOT NULL",
		"ps_availqty integer NOT NULL",
		"ps_supplycost numeric(15,2) NOT NULL",
		"ps_comment varchar(199) NOT NULL",
	}, []string{"ps_partkey", "ps_suppkey"}},
	{"customer", []string{
		"c_custkey integer NOT NULL",
		"c_name varchar(25) NOT NULL",
		"c_address varchar(40) NOT NULL",
		"c_nationkey integer NOT NULL",
		"c_phone char(15) NOT NULL",
		"c_acctbal numeric(15,2) NOT NULL",
		"c_mktsegment char(10) NOT NULL",
		"c_comment varchar(117) NOT NULL",
	}, []string{"c_custkey"}},
	{"orders", []string{
		"o_orderkey bigint NOT NULL",
		"o_custkey integer NOT NULL",
		"o_orderstatus char(1) NOT NULL",
		"o_totalprice numeric(15,2) NOT NULL",
		"o_orderdate date NOT NULL",
		"o_orderpriority char(15) NOT NULL",
		"o_clerk char(15) NOT NULL",
		"o_shippriority integer NOT NULL",
		"o_comment varchar(79) NOT NULL",
	}, []string{"o_orderkey"}},
	{"lineitem", []string{
		"l_orderkey bigint NOT NULL",
		"l_partkey integer NOT NULL",
		"l_suppkey integer NOT NULL",
		"l_linenumber integer NOT NULL",
		"l_quantity numeric(15,2) NOT NULL",
		"l_extendedprice numeric(15,2) NOT NULL",
		"l_discount numeric(15,2) NOT NULL",
		"l_tax numeric(15,2) NOT NULL",
		"l_returnflag char(1) NOT NULL",
		"l_linestatus char(1) NOT NULL",
		"l_shipdate date NOT NULL",
		"l_commitdate date NOT NULL",
		"l_receiptdate date NOT NULL",
		"l_shipinstruct char(25) NOT NULL",
		"l_shipmode char(10) NOT NULL",
		"l_comment varchar(44) NOT NULL",
	}, []string{"l_orderkey", "l_linenumber"}},
}

// TPCHTables are the names of TPCHTableDefs.
var TPCHTables = func() []string {
	var out []string
	for _, t := range TPCHTableDefs {
		out = append(out, t.Name)
	}
	return out
}()

// TPCHSchema creates the TPC-H tables, empty, with their primary keys, and
// grants SELECT on them to PUBLIC.
var TPCHSchema = func() string {
	var b strings.Builder
	for _, t := range TPCHTableDefs {
		fmt.Fprintf(&b, "DROP TABLE IF EXISTS %s;\nCREATE TABLE %s (\n  %s,\n  PRIMARY KEY (%s)\n);\nGRANT SELECT ON %s TO PUBLIC;\n",
			t.Name, t.Name, strings.Join(t.Columns, ",\n  "), strings.Join(t.PKey, ", "), t.Name)
	}
	return b.String()
}()
