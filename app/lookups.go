package app

import (
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// The planner's answers from the origin are written within
// lookupsNewEvery of an answer to a new question (a role's first read of
// a table), and within lookupsSaveEvery of refreshed ones.
const (
	lookupsNewEvery  = time.Second
	lookupsSaveEvery = 30 * time.Second
)

// lookupsFile keeps the planner's answers from the origin (relation names
// on search paths, roles' privileges on the datasets' tables) in
// runtime.data_dir with auth.persist, so that after a restart during an
// outage the users who log in can also read (planner.ExportLookups). The
// file holds no secret, but says which roles may read which tables: mode
// 0600, as the verifiers.
type lookupsFile struct {
	path       string
	resolver   *planner.OriginResolver
	privileges *planner.Privileges
	log        zerolog.Logger

	saved     uint64 // LookupsVersion's answers at the last write
	savedKeys uint64 // and its keys
	savedAt   time.Time
	done      chan struct{}
	stopped   chan struct{}
	stopOnce  sync.Once
}

// load reads the file, when there is one.
func (l *lookupsFile) load() error {
	data, err := auth.ReadPrivateFile(l.path)
	if err != nil || data == nil {
		return err
	}
	if err := planner.ImportLookups(data, l.resolver, l.privileges); err != nil {
		return fmt.Errorf("%s: %w", l.path, err)
	}
	l.saved, l.savedKeys = planner.LookupsVersion(l.resolver, l.privileges)
	l.savedAt = time.Now()
	return nil
}

// run writes the file when it is due, and once more when stopped.
func (l *lookupsFile) run() {
	defer close(l.stopped)
	t := time.NewTicker(lookupsNewEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.save(false)
		case <-l.done:
			l.save(true)
			return
		}
	}
}

// save writes the file when a new question was answered since the last
// write, or answers were refreshed and lookupsSaveEvery has passed (or,
// with final, whenever anything changed).
func (l *lookupsFile) save(final bool) {
	v, keys := planner.LookupsVersion(l.resolver, l.privileges)
	if v == l.saved || keys == l.savedKeys && !final && time.Since(l.savedAt) < lookupsSaveEvery {
		return
	}
	data, err := planner.ExportLookups(l.resolver, l.privileges)
	if err == nil {
		err = auth.WritePrivateFile(l.path, data)
	}
	if err != nil {
		l.log.Warn().Err(err).Str("file", l.path).Msg("could not save the origin's answers about relations and privileges")
		return
	}
	l.saved, l.savedKeys, l.savedAt = v, keys, time.Now()
}

// stop writes the file a last time and ends run.
func (l *lookupsFile) stop() {
	l.stopOnce.Do(func() { close(l.done) })
	<-l.stopped
}

// describeStatement is the statement statistics' describer: the
// planner's normalised text and tables.
func describeStatement(sql string) stmtstats.Description {
	d := planner.DescribeStatement(sql)
	return stmtstats.Description{Text: d.Text, Tables: d.Tables, Read: d.Read}
}
