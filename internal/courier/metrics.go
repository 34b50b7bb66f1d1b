package courier

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	accepted, delivered, failed, timeouts, packets, resent      prometheus.Counter
	acksUnmatched, acksSent, acksFailed, acksSkipped            prometheus.Counter
	received, duplicates, incomplete, inboxRefused, repliesSent prometheus.Counter
	rxDropped, rxMalformed, rxRefused                           prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (metrics, error) {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "relayd", Subsystem: "courier", Name: name, Help: help})
	}
	m := metrics{
		accepted:      counter("messages_accepted_total", "Framed messages this node accepted to send."),
		delivered:     counter("messages_delivered_total", "Framed messages whose recipient acknowledged every fragment."),
		failed:        counter("messages_failed_total", "Framed messages given up after their rounds."),
		timeouts:      counter("round_timeouts_total", "Transmission rounds that ended without an acknowledgement."),
		packets:       counter("packets_sent_total", "Fragments and acknowledgement-block parts sent."),
		resent:        counter("fragments_resent_total", "Fragments sent again in a later round."),
		acksUnmatched: counter("acks_unmatched_total", "Acknowledgements for no message under way."),
		acksSent:      counter("acks_sent_total", "Acknowledgements this node sent as a recipient."),
		acksFailed:    counter("acks_failed_total", "Acknowledgements that could not be sent."),
		acksSkipped:   counter("acks_skipped_total", "Acknowledgements skipped because too many were under way."),
		received:      counter("messages_received_total", "Framed messages stored in the inbox."),
		duplicates:    counter("duplicates_total", "Whole messages received again and not stored twice."),
		incomplete:    counter("messages_incomplete_total", "Messages that arrived incomplete and were given up."),
		inboxRefused:  counter("inbox_refused_total", "Whole messages the inbox refused (quota or disk)."),
		repliesSent:   counter("reply_packets_sent_total", "Answer packets sent on reply blocks."),
		rxDropped:     counter("rx_dropped_total", "Framed packets dropped because the courier's queue was full."),
		rxMalformed:   counter("rx_malformed_total", "Framed packets that did not decode or came the wrong way."),
		rxRefused:     counter("rx_refused_total", "Frames the reassembly refused (limits)."),
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{m.accepted, m.delivered, m.failed, m.timeouts, m.packets, m.resent,
			m.acksUnmatched, m.acksSent, m.acksFailed, m.acksSkipped, m.received, m.duplicates, m.incomplete,
			m.inboxRefused, m.repliesSent, m.rxDropped, m.rxMalformed, m.rxRefused} {
			if err := reg.Register(col); err != nil {
				return m, fmt.Errorf("courier: register metrics: %w", err)
			}
		}
	}
	return m, nil
}
