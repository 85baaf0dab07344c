// Command coverage measures how much of the SQL people write pgaccel answers
// from the acceleration, exactly.
//
// It starts a throwaway origin (internal/pgtest), creates the schemas of
// the corpora in integration/corpora (the acceleration tests' corpus, the
// BI-style coverage corpus and the TPC-H queries over empty TPC-H tables),
// starts pgaccel in-process with every table of them as a dataset, and runs
// each statement directly and through pgaccel in the simple protocol and
// the extended protocol with text and with binary results. Answers are
// compared byte for byte (columns, types, rows, command tags, errors); the
// route of each execution is read with SHOW pgaccel.last_route.
//
// Per corpus it prints the share of the statements that read only
// datasets and are not point reads that were accelerated in all three
// executions, and the reasons of the rest. A statement reads only datasets
// unless its route's reason says otherwise (no_dataset, no_tables,
// not_accelerated, catalog, unresolved, column_not_accelerated, privilege,
// row_security, temp_table, write); point reads are those routed with
// point_read or marked in the corpus.
//
//	go run ./bench/coverage [-out bench/RESULTS.md] [-v]
//
// It exits with status 1 when any answer differs from the origin's.
package main
