package p2p

import (
	"bufio"
	"errors"
	"io"
	"log/slog"

	"github.com/libp2p/go-libp2p/core/network"
)

// readBufferSize is the bufio.Reader size of an inbound frame stream.
const readBufferSize = 64 << 10

// serveFrames is the read loop of one inbound msg or ack stream: it reads frames
// and calls the protocol's handler for each, in order, until the stream ends. A
// frame above MaxFrameSize or a malformed frame drops the stream.
func (h *Host) serveFrames(idx int, s network.Stream) {
	if !h.track() {
		_ = s.Reset()
		return
	}
	defer h.wg.Done()
	from := s.Conn().RemotePeer()
	fm := &h.metrics.frames[idx]
	var tc *trafficCounter // packets only, not acknowledgements
	if idx == msgIndex {
		tc = h.trafficCounter(from)
	}
	br := bufio.NewReaderSize(s, readBufferSize)
	var buf []byte
	for {
		frame, err := readFrame(br, buf, h.cfg.MaxFrameSize)
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = s.Close()
				return
			}
			reason := ""
			switch {
			case errors.Is(err, ErrFrameTooLarge):
				reason = dropOversized
			case errors.Is(err, ErrBadFrame):
				reason = dropBadFrame
			}
			if reason != "" {
				fm.dropped[reason].Inc()
				h.log.Debug("p2p bad inbound frame, dropping stream", slog.String("peer_id", from.String()),
					slog.String("protocol", protoName(idx)), slog.String("reason", reason), slog.Any("err", err))
			} else if h.ctx.Err() == nil {
				h.log.Debug("p2p inbound stream failed", slog.String("peer_id", from.String()),
					slog.String("protocol", protoName(idx)), slog.Any("err", err))
			}
			_ = s.Reset()
			return
		}
		buf = frame[:cap(frame)]
		fm.received.Inc()
		fm.bytesReceived.Add(float64(len(frame)))
		if tc != nil {
			tc.counters().countReceived(len(frame))
		}
		if fn := h.handlers[idx].Load(); fn != nil {
			(*fn)(from, frame)
		}
	}
}
