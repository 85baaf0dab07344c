package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "github.com/duckdb/duckdb-go/v2"
)

func main() {
	db, _ := sql.Open("duckdb", "")
	for _, q := range os.Args[1:] {
		rows, err := db.Query(q)
		if err != nil {
			fmt.Println("ERR", err)
			continue
		}
		cols, _ := rows.Columns()
		ct, _ := rows.ColumnTypes()
		for _, c := range ct {
			fmt.Print(c.DatabaseTypeName(), " ")
		}
		fmt.Println()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			fmt.Println(vals...)
		}
	}
}
