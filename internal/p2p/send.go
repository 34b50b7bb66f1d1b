package p2p

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// writeBufferSize is the bufio.Writer size of an outbound stream: frames queued
// together leave in one write of up to this many bytes.
const writeBufferSize = 64 << 10

// outKey names one outbound stream.
type outKey struct {
	peer peer.ID
	idx  int // frame protocol index
}

// outbound is the long-lived stream to one peer for one protocol, with its queue
// and writer goroutine. Only the writer touches s and bw.
type outbound struct {
	h     *Host
	key   outKey
	queue chan []byte

	s  network.Stream
	bw *bufio.Writer

	delay time.Duration // how long a first frame waits for others (acknowledgements only)
	timer *time.Timer   // gather's, reused

	mu       sync.Mutex                 // guards retry, retryAt and failedAt
	retry    backoff.ExponentialBackOff // the wait after each failure in a row: BackoffMin, doubling up to BackoffMax
	retryAt  time.Time                  // zero when not backing off
	failedAt time.Time                  // the last failure
}

// Send queues frame for to on proto (ProtocolMsg or ProtocolAck) and returns
// without waiting for the network. It copies frame, so the caller may reuse it.
//
// Frames to one peer on one protocol travel in order over one long-lived stream,
// opened on first use and re-opened after a failure. Send fails at once, and queues
// nothing, with ErrFrameTooLarge or ErrBadFrame for a frame that is too long or
// empty, ErrSelf for the node itself, ErrNoAddress for a peer with no connection
// and no known address, ErrUnreachable while the stream to the peer is backing off
// after a failure, ErrQueueFull when the peer's queue is full, and ErrClosed after
// Close. A nil error means queued, not delivered: frames queued when a stream fails
// are lost and counted as dropped. Send never waits, so ctx is only checked on entry.
func (h *Host) Send(ctx context.Context, to peer.ID, proto Protocol, frame []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	idx, err := proto.frameIndex()
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	fm := &h.metrics.frames[idx]
	if len(frame) == 0 {
		return fmt.Errorf("send %s: %w: empty", proto, ErrBadFrame)
	}
	if len(frame) > h.cfg.MaxFrameSize {
		fm.dropped[dropOversized].Inc()
		return fmt.Errorf("send %s: %w: %d bytes, max %d", proto, ErrFrameTooLarge, len(frame), h.cfg.MaxFrameSize)
	}
	if to == h.self {
		return fmt.Errorf("send %s: %w", proto, ErrSelf)
	}
	o, err := h.outbound(outKey{peer: to, idx: idx})
	if err != nil {
		return fmt.Errorf("send %s to %s: %w", proto, to, err)
	}
	if wait := o.blocked(time.Now()); wait > 0 {
		fm.dropped[dropUnreachable].Inc()
		return fmt.Errorf("send %s to %s: %w (retry in %s)", proto, to, ErrUnreachable, wait.Round(time.Millisecond))
	}
	buf := make([]byte, len(frame))
	copy(buf, frame)
	select {
	case o.queue <- buf:
		return nil
	default:
		fm.dropped[dropQueueFull].Inc()
		return fmt.Errorf("send %s to %s: %w", proto, to, ErrQueueFull)
	}
}

// outbound returns the outbound stream state for k, creating it and starting its
// writer on first use.
func (h *Host) outbound(k outKey) (*outbound, error) {
	h.mu.RLock()
	o, ok := h.out[k]
	closed := h.closed
	h.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	if ok {
		return o, nil
	}
	if !h.hasRoute(k.peer) {
		return nil, ErrNoAddress
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if o, ok := h.out[k]; ok {
		return o, nil
	}
	o = &outbound{
		h:     h,
		key:   k,
		queue: make(chan []byte, h.cfg.QueueSize),
		bw:    bufio.NewWriterSize(nil, writeBufferSize),
		retry: h.streamBackoff(),
	}
	if k.idx == ackIndex {
		o.delay = h.cfg.AckDelay
	}
	h.out[k] = o
	h.wg.Add(1)
	go o.run()
	return o, nil
}

// backoff returns how long Send must still refuse frames, or 0.
func (o *outbound) backoff(now time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.retryAt.IsZero() {
		return 0
	}
	return o.retryAt.Sub(now)
}

// blocked is backoff, except that a connection to the peer opened after the last failure
// ends the wait: the peer came back (a restarted relayer dials its next hop), and frames for
// it, acknowledgements being money, should not be refused until the backoff runs out.
func (o *outbound) blocked(now time.Time) time.Duration {
	wait := o.backoff(now)
	if wait <= 0 {
		return wait
	}
	o.mu.Lock()
	failed := o.failedAt
	o.mu.Unlock()
	for _, c := range o.h.host.Network().ConnsToPeer(o.key.peer) {
		if c.Stat().Opened.After(failed) {
			return 0
		}
	}
	return wait
}

// streamBackoff is the wait before re-opening a stream after each failure in a row: BackoffMin,
// doubling up to BackoffMax. No jitter: it paces one node's stream to one peer, not a crowd
// retrying in step.
func (h *Host) streamBackoff() backoff.ExponentialBackOff {
	return backoff.ExponentialBackOff{InitialInterval: h.cfg.BackoffMin, Multiplier: 2, MaxInterval: h.cfg.BackoffMax}
}

// fail records a stream failure and schedules the next attempt; the peer counts as down until
// its next successful heartbeat.
func (o *outbound) fail(now time.Time) time.Duration {
	o.h.markDown(o.key.peer)
	o.mu.Lock()
	defer o.mu.Unlock()
	wait := o.retry.NextBackOff()
	o.retryAt = now.Add(wait)
	o.failedAt = now
	return wait
}

// succeed clears the backoff after a successful write.
func (o *outbound) succeed() {
	o.mu.Lock()
	o.retry.Reset()
	o.retryAt = time.Time{}
	o.mu.Unlock()
}

// resetBackoff lets the next Send try at once (the peer has new addresses).
func (o *outbound) resetBackoff() {
	o.succeed()
}

// run is the writer goroutine: it takes frames off the queue, writes them through
// the buffered writer while more are waiting, and flushes when the queue is empty.
func (o *outbound) run() {
	defer o.h.wg.Done()
	defer o.dropStream()
	fm := &o.h.metrics.frames[o.key.idx]
	var tc *trafficCounter // packets only, not acknowledgements
	if o.key.idx == msgIndex {
		tc = o.h.trafficCounter(o.key.peer)
	}
	var batch [][]byte
	for {
		var f []byte
		select {
		case <-o.h.ctx.Done():
			return
		case f = <-o.queue:
		}
		o.leaveRelay()
		if !o.ensureStream() {
			fm.dropped[dropUnreachable].Inc()
			continue
		}
		// The batch: f and whatever else is queued, written through the buffer and flushed
		// when the queue is empty. It is kept until the flush so that a write that fails on
		// a dead stream can be repeated once on a fresh one (receivers drop duplicates: replay
		// tags for packets, the pending table for acknowledgements).
		batch = append(batch[:0], f)
		o.gather(&batch)
		err := o.writeBatch(&batch)
		if err != nil && o.retryable() {
			o.dropStream()
			if o.ensureStreamNow() {
				err = o.writeBatch(&batch)
			}
		}
		bytes := 0
		for _, b := range batch {
			bytes += len(b)
		}
		if err != nil {
			// All counted as lost, although bytes that left before the error may have arrived.
			fm.dropped[dropStreamError].Add(float64(len(batch)))
			wait := o.fail(time.Now())
			o.h.log.Debug("p2p stream write failed", slog.String("peer_id", o.key.peer.String()),
				slog.String("protocol", protoName(o.key.idx)), slog.Duration("retry_in", wait), slog.Any("err", err))
			o.dropStream()
			continue
		}
		fm.sent.Add(float64(len(batch)))
		fm.writes.Inc()
		fm.bytesSent.Add(float64(bytes))
		if tc != nil {
			tc.counters().countSent(len(batch), bytes)
		}
		o.succeed()
	}
}

// gather waits up to the stream's delay (Config.AckDelay on acknowledgement streams, none on
// packet streams) for more frames to join *batch, so that they leave in one write.
func (o *outbound) gather(batch *[][]byte) {
	if o.delay <= 0 {
		return
	}
	if o.timer == nil {
		o.timer = time.NewTimer(o.delay)
	} else {
		o.timer.Reset(o.delay)
	}
	defer o.timer.Stop()
	for len(*batch) < maxBatch {
		select {
		case f := <-o.queue:
			*batch = append(*batch, f)
		case <-o.timer.C:
			return
		case <-o.h.ctx.Done():
			return
		}
	}
}

// maxBatch bounds the frames one flush carries (and a batch keeps for a retry).
const maxBatch = 256

// writeBatch writes the frames of *batch, takes more off the queue while there are any
// (appending them to *batch, up to maxBatch), and flushes.
func (o *outbound) writeBatch(batch *[][]byte) error {
	for _, f := range *batch {
		if err := writeFrame(o.bw, f); err != nil {
			return err
		}
	}
	for len(*batch) < maxBatch {
		select {
		case f := <-o.queue:
			*batch = append(*batch, f)
			if err := writeFrame(o.bw, f); err != nil {
				return err
			}
		default:
			return o.bw.Flush()
		}
	}
	return o.bw.Flush()
}

// retryable reports whether a failed write is worth repeating at once on a new stream: the
// peer has a live connection (the stream died with an older one, or was reset alone).
func (o *outbound) retryable() bool {
	return o.h.host.Network().Connectedness(o.key.peer) == network.Connected
}

// ensureStream opens the stream if there is none and the backoff allows it.
func (o *outbound) ensureStream() bool {
	if o.s != nil {
		return true
	}
	if o.blocked(time.Now()) > 0 {
		return false
	}
	return o.ensureStreamNow()
}

// ensureStreamNow opens the stream regardless of the backoff.
func (o *outbound) ensureStreamNow() bool {
	if o.s != nil {
		return true
	}
	ctx, cancel := context.WithTimeout(limitedOK(o.h.ctx), o.h.cfg.DialTimeout)
	err := o.h.awaitHolePunching(ctx, o.key.peer)
	var s network.Stream
	if err == nil {
		s, err = o.h.host.NewStream(ctx, o.key.peer, o.h.pids[o.key.idx])
	}
	cancel()
	if err != nil {
		wait := o.fail(time.Now())
		if !errors.Is(err, context.Canceled) {
			o.h.log.Debug("p2p open stream failed", slog.String("peer_id", o.key.peer.String()),
				slog.String("protocol", protoName(o.key.idx)), slog.Duration("retry_in", wait), slog.Any("err", err))
		}
		return false
	}
	o.s = s
	o.bw.Reset(deadlineWriter{s: s, timeout: o.h.cfg.WriteTimeout})
	return true
}

// leaveRelay closes the stream when a relay carries it and a direct connection to the peer has
// opened since (a hole punch): the next frame opens its stream on the direct connection, which
// libp2p prefers. Everything written before is flushed, so nothing is lost; the peer's read loop
// ends at the close.
func (o *outbound) leaveRelay() {
	if o.s == nil || !o.s.Conn().Stat().Limited || !o.h.hasDirectConn(o.key.peer) {
		return
	}
	_ = o.s.Close()
	o.s = nil
	o.bw.Reset(nil)
}

// dropStream resets the current stream, if any, and discards buffered bytes.
func (o *outbound) dropStream() {
	if o.s == nil {
		return
	}
	_ = o.s.Reset()
	o.s = nil
	o.bw.Reset(nil)
}

// deadlineWriter sets a write deadline before every write to the stream, so a peer
// that stops reading cannot block the writer forever. bufio calls it once per
// buffer, not once per frame.
type deadlineWriter struct {
	s       network.Stream
	timeout time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	if err := w.s.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
		return 0, err
	}
	return w.s.Write(p)
}

// protoName returns the name of frame protocol index idx.
func protoName(idx int) string {
	return Protocol(idx + 1).String()
}
