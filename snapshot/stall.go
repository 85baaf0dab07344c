package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"
)

// stallTimeout is how long an S3 transfer may move no byte before it is
// abandoned: a server or a network that stops answering mid-transfer
// would otherwise hold a poll, a bootstrap or a publish for ever (the
// HTTP client has no overall timeout, since a large snapshot may take
// long). A request that is not a transfer (metadata, abort) gets this
// long in all.
var stallTimeout = 60 * time.Second

// errStalled is the cause of a transfer abandoned by its watchdog.
type errStalled struct{ d time.Duration }

func (e errStalled) Error() string {
	return fmt.Sprintf("no byte moved for %s: the transfer is abandoned", e.d)
}

// watch returns ctx ended when touch has not been called for
// stallTimeout; stop releases it.
func watch(ctx context.Context) (wctx context.Context, touch, stop func()) {
	d := stallTimeout
	wctx, cancel := context.WithCancelCause(ctx)
	t := time.AfterFunc(d, func() { cancel(errStalled{d}) })
	return wctx, func() { t.Reset(d) }, func() { t.Stop(); cancel(nil) }
}

// stalled adds the watchdog's cause to err when it ended wctx.
func stalled(wctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause, ok := context.Cause(wctx).(errStalled); ok {
		return fmt.Errorf("%w (%v)", err, cause)
	}
	return err
}

// touchReader calls touch on every read that moves bytes.
type touchReader struct {
	r     io.Reader
	touch func()
}

func (t touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}

// touchBody is a request body that touches as the client sends it; it
// seeks, as the SDK needs to sign and retry.
type touchBody struct {
	*bytes.Reader
	touch func()
}

func (t touchBody) Read(p []byte) (int, error) {
	n, err := t.Reader.Read(p)
	if n > 0 {
		t.touch()
	}
	return n, err
}
