package accelerator

import (
	"context"
	"fmt"
	"time"
)

// Compaction is a CHECKPOINT of a dataset's database. It compresses the
// table a load wrote (in mode memory, DuckDB keeps freshly inserted rows
// uncompressed until a checkpoint: several times the compressed size) and
// frees the blocks of the table the swap dropped; in mode file it also
// writes them to the file. DuckDB refuses a checkpoint while another
// transaction in that database is open, so the background compaction after
// a load retries a few times.
const (
	compactAttempts = 8
	compactBackoff  = 250 * time.Millisecond
)

// Compact checkpoints the dataset's database now, after any load of it in
// progress. It fails when other transactions in that database are open.
func (e *Engine) Compact(ctx context.Context, dataset string) error {
	h, err := e.handle(dataset)
	if err != nil {
		return fmt.Errorf("compact dataset %s: %w", dataset, err)
	}
	if err := h.lockIdle(ctx); err != nil {
		return fmt.Errorf("compact dataset %s: %w", dataset, err)
	}
	defer h.loadMu.Unlock()
	if err := e.compact(ctx, dataset); err != nil {
		return fmt.Errorf("compact dataset %s: %w", dataset, err)
	}
	return nil
}

func (e *Engine) compact(ctx context.Context, dataset string) error {
	_, err := e.db.ExecContext(ctx, "CHECKPOINT "+quoteIdent(DatabaseName(dataset)))
	return err
}

// compactLater compacts the dataset in the background. Each attempt holds
// the dataset's load lock (a new load waits for it, a retry waits for a
// new load). Close interrupts it and waits for it.
//
// A request while one is waiting for the lock is the same request: the
// waiting one compacts what the lock's holder leaves.
func (e *Engine) compactLater(h *dsHandle, dataset string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed { // Close is waiting for e.wg already
		return
	}
	if !h.compactWaiting.CompareAndSwap(false, true) {
		return
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // Close interrupts a compaction in progress
			select {
			case <-e.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		backoff := compactBackoff
		rewroteTwice := false
		for attempt := 1; ; attempt++ {
			start := time.Now()
			h.loadMu.Lock()
			if attempt == 1 {
				h.compactWaiting.Store(false)
			}
			if h.track != nil {
				// A rewrite in the background is copying; the file it
				// installs is compacted.
				h.loadMu.Unlock()
				return
			}
			err, rerr, later := e.reclaimLocked(ctx, h, dataset, true)
			h.loadMu.Unlock()
			if later != nil {
				rerr = later(ctx)
				if rerr == nil && !rewroteTwice {
					// A copy DuckDB wrote large (installNext) is
					// written once more.
					rewroteTwice = true
					attempt--
					continue
				}
			}
			if rerr != nil && ctx.Err() == nil {
				e.log.Warn().Err(rerr).Str("dataset", dataset).Msg("the acceleration's table was not rewritten; its deleted rows stay until the next attempt")
			}
			if err == nil {
				e.log.Debug().Str("dataset", dataset).Dur("duration", time.Since(start)).Msg("compacted acceleration")
				return
			}
			if attempt == compactAttempts || ctx.Err() != nil {
				e.log.Debug().Err(err).Str("dataset", dataset).Msg("compaction after load skipped")
				return
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff *= 2
		}
	}()
}
