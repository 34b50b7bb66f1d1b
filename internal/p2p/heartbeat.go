package p2p

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

const (
	// InitialQuality is the quality of a peer that has not been pinged yet.
	InitialQuality = 0.5
	// QualityWeight is the weight of the newest ping in a peer's quality.
	QualityWeight = 0.25

	// nonceSize is the length of a heartbeat ping and of its echo.
	nonceSize = 16
	// maxConcurrentPings bounds the pings one heartbeat round runs at a time.
	maxConcurrentPings = 16
)

// Run pings every known peer every Config.HeartbeatInterval, starting at once,
// and updates their quality, last-seen time and latency. It returns nil when ctx
// ends or the host is closed. Call it once.
func (h *Host) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return errors.New("p2p: Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()

	t := time.NewTicker(h.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		h.heartbeatRound(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// heartbeatRound pings every known peer, at most maxConcurrentPings at a time, and
// waits for all pings.
func (h *Host) heartbeatRound(ctx context.Context) {
	sem := make(chan struct{}, maxConcurrentPings)
	var wg sync.WaitGroup
	for _, id := range h.knownPeers() {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		if !h.track() {
			break
		}
		wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer wg.Done()
			defer func() { <-sem }()
			rtt, err := h.ping(ctx, id)
			if ctx.Err() != nil {
				return // shutting down: not the peer's fault
			}
			h.recordPing(id, rtt, err, time.Now())
			if err != nil {
				h.log.Debug("p2p heartbeat failed", slog.String("peer_id", id.String()), slog.Any("err", err))
			}
		}()
	}
	wg.Wait()
}

// Ping sends one heartbeat to id and returns the round-trip time, dialling the
// peer if needed. It updates the peer's quality, last-seen time and latency like a
// heartbeat does if the peer is known. The wait is bounded by ctx and by
// Config.PingTimeout.
func (h *Host) Ping(ctx context.Context, id peer.ID) (time.Duration, error) {
	if id == h.self {
		return 0, fmt.Errorf("ping: %w", ErrSelf)
	}
	if !h.track() {
		return 0, fmt.Errorf("ping: %w", ErrClosed)
	}
	defer h.wg.Done()
	rtt, err := h.ping(ctx, id)
	// A failure the caller caused by cancelling, or Close caused, says nothing
	// about the peer.
	if err == nil || (ctx.Err() == nil && h.ctx.Err() == nil) {
		h.recordPing(id, rtt, err, time.Now())
	}
	return rtt, err
}

// ping opens a heartbeat stream to id, sends a random nonce and waits for its echo.
func (h *Host) ping(ctx context.Context, id peer.ID) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PingTimeout)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()

	if !h.hasRoute(id) {
		return 0, fmt.Errorf("ping %s: %w", id, ErrNoAddress)
	}
	if err := h.awaitHolePunching(ctx, id); err != nil {
		return 0, fmt.Errorf("ping %s: %w", id, err)
	}
	s, err := h.host.NewStream(limitedOK(ctx), id, h.pids[ProtocolHeartbeat-1])
	if err != nil {
		return 0, fmt.Errorf("ping %s: open stream: %w", id, err)
	}
	// A cancelled ctx unblocks the write and read below by resetting the stream.
	stopReset := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stopReset()

	var nonce, echo [nonceSize]byte
	_, _ = rand.Read(nonce[:])
	start := time.Now()
	if _, err := s.Write(nonce[:]); err != nil {
		_ = s.Reset()
		return 0, pingError(ctx, id, err)
	}
	if _, err := io.ReadFull(s, echo[:]); err != nil {
		_ = s.Reset()
		return 0, pingError(ctx, id, err)
	}
	rtt := time.Since(start)
	if nonce != echo {
		_ = s.Reset()
		return 0, fmt.Errorf("ping %s: %w", id, ErrBadPong)
	}
	_ = s.Close()
	return rtt, nil
}

// pingError prefers the context's error to the stream reset it caused.
func pingError(ctx context.Context, id peer.ID, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("ping %s: %w", id, ctxErr)
	}
	return fmt.Errorf("ping %s: %w", id, err)
}

// serveHeartbeat echoes every nonce a peer sends on a heartbeat stream until the
// peer closes it or stays silent for PingTimeout.
func (h *Host) serveHeartbeat(s network.Stream) {
	if !h.track() {
		_ = s.Reset()
		return
	}
	defer h.wg.Done()
	var buf [nonceSize]byte
	for {
		_ = s.SetReadDeadline(time.Now().Add(h.cfg.PingTimeout))
		if _, err := io.ReadFull(s, buf[:]); err != nil {
			if errors.Is(err, io.EOF) {
				_ = s.Close()
			} else {
				_ = s.Reset()
			}
			return
		}
		_ = s.SetWriteDeadline(time.Now().Add(h.cfg.PingTimeout))
		if _, err := s.Write(buf[:]); err != nil {
			_ = s.Reset()
			return
		}
	}
}
