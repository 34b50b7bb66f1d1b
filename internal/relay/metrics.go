package relay

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/relayd/relayd/internal/ledger"
	"github.com/relayd/relayd/internal/packet"
)

// Drop reasons, the "reason" label of relay_packets_dropped_total and relay_acks_dropped_total.
const (
	reasonFrameSize     = "frame_size"
	reasonFrameVersion  = "frame_version"
	reasonPacketSize    = "packet_size"
	reasonBadPoint      = "bad_point"
	reasonMAC           = "mac"
	reasonReplay        = "replay"
	reasonExpired       = "expired"
	reasonPayload       = "payload"
	reasonReplayStore   = "replay_store"
	reasonBadPeer       = "bad_peer"
	reasonBadNextHop    = "bad_next_hop"
	reasonTicketMissing = "ticket_missing"
	reasonTicketBad     = "ticket_malformed"
	reasonTicketChannel = "ticket_channel"
	reasonChannelClosed = "channel_not_open"
	reasonNoChannel     = "channel_not_found"
	reasonTicketEpoch   = "ticket_epoch"
	reasonTicketSigner  = "ticket_signer"
	reasonTicketIndex   = "ticket_index"
	reasonTicketAmount  = "ticket_amount"
	reasonTicketBalance = "ticket_balance"
	reasonTicketWinProb = "ticket_win_prob"
	reasonTicketPoR     = "ticket_challenge"
	reasonTicketOther   = "ticket_other"
	reasonOverload      = "overload"
	reasonDuplicate     = "duplicate"
	reasonNoBalance     = "not_enough_balance"
	reasonIssue         = "issue_failed"
	reasonSend          = "send_failed"
	reasonStopped       = "stopped"
	reasonUnknownAck    = "unknown"
	reasonWrongPeer     = "wrong_peer"
	reasonBadAck        = "bad_ack"
	reasonStoreFailing  = "store_failing"
	reasonReplyUnknown  = "reply_unknown"
	reasonReplyPayload  = "reply_payload"
	reasonReplyKeyring  = "reply_keyring"
)

var packetReasons = []string{reasonFrameSize, reasonFrameVersion, reasonPacketSize, reasonBadPoint,
	reasonMAC, reasonReplay, reasonExpired, reasonPayload, reasonReplayStore, reasonBadPeer, reasonBadNextHop,
	reasonTicketMissing, reasonTicketBad, reasonTicketChannel, reasonChannelClosed, reasonNoChannel,
	reasonTicketEpoch, reasonTicketSigner, reasonTicketIndex, reasonTicketAmount, reasonTicketBalance, reasonTicketWinProb,
	reasonTicketPoR, reasonTicketOther, reasonOverload, reasonDuplicate, reasonNoBalance, reasonIssue,
	reasonSend, reasonStopped, reasonStoreFailing, reasonReplyUnknown, reasonReplyPayload, reasonReplyKeyring}

var ackReasons = []string{reasonFrameSize, reasonFrameVersion, reasonUnknownAck, reasonWrongPeer,
	reasonBadAck, reasonOverload, reasonStopped, reasonBadPeer}

type metrics struct {
	received, forwarded, delivered, sent prometheus.Counter
	drops                                prometheus.Counter
	replyBlocks, repliesSent, replies    prometheus.Counter
	acksReceived, acksSent               prometheus.Counter
	ticketsAcked, ticketsNeglected       prometheus.Counter
	dropped, acksDropped                 *prometheus.CounterVec
	queueWait                            prometheus.Histogram
	spent                                prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, pending func() float64) *metrics {
	c := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "relay", Name: name, Help: help})
	}
	m := &metrics{
		received:         c("packets_received_total", "Msg frames received."),
		forwarded:        c("packets_forwarded_total", "Packets forwarded to their next hop."),
		delivered:        c("packets_delivered_total", "Packets for which this node was the recipient, its own returning loop cover packets included (relayd_cover_packets_returned_total counts those)."),
		sent:             c("packets_sent_total", "Packets this node sent: messages, loop cover and drop cover."),
		drops:            c("drops_received_total", "Drop cover packets that ended at this node (discarded after their ticket and acknowledgement)."),
		replyBlocks:      c("reply_blocks_created_total", "Reply blocks this node made."),
		repliesSent:      c("replies_sent_total", "Replies this node sent with other nodes' reply blocks (also counted in packets_sent_total)."),
		replies:          c("replies_received_total", "Replies to this node's reply blocks delivered (also counted in packets_delivered_total)."),
		acksReceived:     c("acks_received_total", "Valid acknowledgements received."),
		acksSent:         c("acks_sent_total", "Acknowledgements sent to previous hops."),
		ticketsAcked:     c("tickets_acknowledged_total", "Incoming tickets recorded as acknowledged."),
		ticketsNeglected: c("tickets_neglected_total", "Pending tickets given up without acknowledgement."),
		spent:            c("tokens_spent_total", "Tokens the first tickets of this node's own packets were worth: messages, replies, session blocks, loop and drop cover (what it paid to send)."),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "relay",
			Name: "packets_dropped_total", Help: "Packets dropped, by reason."}, []string{"reason"}),
		acksDropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "relay",
			Name: "acks_dropped_total", Help: "Acknowledgements dropped, by reason."}, []string{"reason"}),
		queueWait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "relayd", Subsystem: "relay",
			Name: "queue_wait_seconds", Help: "How long packets, acknowledgements and due forwards waited for a worker.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}}),
	}
	for _, r := range packetReasons {
		m.dropped.WithLabelValues(r)
	}
	for _, r := range ackReasons {
		m.acksDropped.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.received, m.forwarded, m.delivered, m.sent, m.drops, m.replyBlocks, m.repliesSent, m.replies,
			m.acksReceived, m.acksSent,
			m.ticketsAcked, m.ticketsNeglected, m.dropped, m.acksDropped, m.queueWait, m.spent,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "relayd", Subsystem: "relay",
				Name: "pending_acks", Help: "Forwarded packets awaiting the next hop's acknowledgement."}, pending))
	}
	return m
}

// reasonOf maps an error of the receive path to its drop reason.
func reasonOf(err error) string {
	for _, e := range []struct {
		err    error
		reason string
	}{
		{ErrFrameSize, reasonFrameSize}, {ErrFrameVersion, reasonFrameVersion},
		{packet.ErrSize, reasonPacketSize}, {packet.ErrBadPoint, reasonBadPoint}, {packet.ErrMAC, reasonMAC},
		{packet.ErrReplay, reasonReplay}, {packet.ErrExpired, reasonExpired}, {packet.ErrPayload, reasonPayload},
		{ErrTicketMissing, reasonTicketMissing}, {ErrTicketMalformed, reasonTicketBad},
		{ledger.ErrTicketChannel, reasonTicketChannel}, {ledger.ErrChannelNotOpen, reasonChannelClosed},
		{ledger.ErrChannelNotFound, reasonNoChannel}, {ledger.ErrTicketEpoch, reasonTicketEpoch},
		{ledger.ErrTicketSigner, reasonTicketSigner}, {ledger.ErrTicketIndex, reasonTicketIndex},
		{ledger.ErrTicketAmount, reasonTicketAmount}, {ledger.ErrTicketBalance, reasonTicketBalance},
		{ledger.ErrTicketWinProb, reasonTicketWinProb},
		{ErrTicketChallenge, reasonTicketPoR}, {ErrInvalidTicket, reasonTicketOther},
		{ErrOverloaded, reasonOverload}, {ledger.ErrNotEnoughBalance, reasonNoBalance},
		{ErrUnknownAck, reasonUnknownAck}, {ErrBadAck, reasonBadAck}, {ErrUnknownReply, reasonReplyUnknown},
	} {
		if errors.Is(err, e.err) {
			return e.reason
		}
	}
	return reasonReplayStore
}
