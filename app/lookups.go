package app

import (
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/planner"
)

// lookupsSaveEvery is how often the planner's answers from the origin are
// written when they changed.
const lookupsSaveEvery = 30 * time.Second

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

	saved    uint64 // LookupsVersion at the last write
	done     chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
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
	l.saved = planner.LookupsVersion(l.resolver, l.privileges)
	return nil
}

// run writes the file every lookupsSaveEvery when the answers changed,
// and once more when stopped.
func (l *lookupsFile) run() {
	defer close(l.stopped)
	t := time.NewTicker(lookupsSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.save()
		case <-l.done:
			l.save()
			return
		}
	}
}

func (l *lookupsFile) save() {
	v := planner.LookupsVersion(l.resolver, l.privileges)
	if v == l.saved {
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
	l.saved = v
}

// stop writes the file a last time and ends run.
func (l *lookupsFile) stop() {
	l.stopOnce.Do(func() { close(l.done) })
	<-l.stopped
}
