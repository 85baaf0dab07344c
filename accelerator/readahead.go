package accelerator

import (
	"context"
	"io"
)

// Sizes of a load's read-ahead: blocks of readaheadBlock bytes, at most
// readaheadBlocks of them filled ahead of the decoder.
const (
	readaheadBlock  = 1 << 20
	readaheadBlocks = 4
)

// readahead reads its source on a goroutine of its own, in large blocks.
//
// The decoder runs on DuckDB's threads, which are locked to their OS threads
// while they run Go code: each time one waits for the source (a pipe that
// delivers one COPY row per write, a socket that delivers 8 KiB at a time)
// it costs two context switches. Through readahead they wait at most once
// per block.
type readahead struct {
	ctx    context.Context
	blocks chan []byte
	free   chan []byte
	done   chan struct{}
	err    error // the source's error, set before blocks is closed

	cur  []byte
	held []byte
	rerr error
}

// newReadahead starts reading src. Read fails with ctx's error once ctx is
// done. Close stops the goroutine.
func newReadahead(ctx context.Context, src io.Reader) *readahead {
	r := &readahead{
		ctx:    ctx,
		blocks: make(chan []byte, readaheadBlocks),
		free:   make(chan []byte, readaheadBlocks+2),
		done:   make(chan struct{}),
	}
	go r.fill(src)
	return r
}

func (r *readahead) fill(src io.Reader) {
	defer close(r.blocks)
	for {
		var block []byte
		select {
		case block = <-r.free:
		default:
			block = make([]byte, readaheadBlock)
		}
		block = block[:cap(block)]
		n, err := io.ReadFull(src, block)
		if n > 0 {
			select {
			case r.blocks <- block[:n]:
			case <-r.done:
				return
			}
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		if err != nil {
			r.err = err
			return
		}
	}
}

// Read implements io.Reader.
func (r *readahead) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.rerr != nil {
			return 0, r.rerr
		}
		if r.held != nil {
			select {
			case r.free <- r.held:
			default:
			}
			r.held = nil
		}
		select {
		case b, ok := <-r.blocks:
			if !ok {
				r.rerr = r.err
				return 0, r.rerr
			}
			r.cur, r.held = b, b
		case <-r.ctx.Done():
			r.rerr = r.ctx.Err()
			return 0, r.rerr
		}
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close tells the goroutine to stop. It does not wait: a goroutine blocked
// in the source's Read ends when that Read returns, so whoever owns the
// source closes it after Load.
func (r *readahead) Close() {
	close(r.done)
}
