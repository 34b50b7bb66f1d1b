package sim

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestFramedMessages: a framed message is its packets, each over a path of its own and scored
// on its own, one group per message; its recipient acknowledges and answers it once it is
// whole, each on a return path to the sender, and the observer traces those back over the
// recipients.
func TestFramedMessages(t *testing.T) {
	cfg := lan(t, func(c *Config) {
		c.Rate = 8
		c.Fragments, c.FragmentGap, c.Ack, c.Answer = 6, 400*time.Microsecond, true, true
	})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	f := r.Framed
	if f == nil || f.Messages < 50 || f.Complete != f.Messages || f.Fragments != 6 {
		t.Fatalf("framed %+v", f)
	}
	if r.Accepted != 6*f.Messages || r.Delivered != r.Accepted {
		t.Fatalf("%d packets accepted, %d delivered, for %d messages of 6", r.Accepted, r.Delivered, f.Messages)
	}
	if f.Acks != f.Complete || f.Answers != f.Complete || f.AcksArrived != f.Acks || f.AnswersArrived != f.Answers ||
		f.BackLost != 0 || f.BackNoPath != 0 {
		t.Fatalf("sent back %+v", f)
	}
	if f.CompleteP50 < 5*400*time.Microsecond || f.CompleteP99 < f.CompleteP50 {
		t.Fatalf("a whole message in %v (p99 %v): not before its last packet left", f.CompleteP50, f.CompleteP99)
	}
	// Every packet sent back goes from a recipient to a sender, after its message was sent.
	if len(s.backTruth) != f.Acks+f.Answers {
		t.Fatalf("%d packets sent back in the truth, %d sent", len(s.backTruth), f.Acks+f.Answers)
	}
	for i, m := range s.backTruth {
		msg := s.framed[s.backGroup[i]]
		if m.Sender != msg.to || m.Recipient != msg.from || m.Sender < cfg.Senders || m.Recipient >= cfg.Senders ||
			m.Delivered.Before(m.Sent) || m.Sent.Before(simTime(msg.asked)) {
			t.Fatalf("packet sent back %d: %+v for message %+v", i, m, *msg)
		}
	}
	p := r.Privacy
	if p.Messages < r.Delivered*95/100 || p.Groups != f.Complete || math.Abs(p.GroupRandomGuess-1/float64(cfg.Senders)) > 1e-9 {
		t.Fatalf("observer: %d packets scored of %d, %d groups of %d, random %v", p.Messages, r.Delivered, p.Groups, f.Complete, p.GroupRandomGuess)
	}
	if p.Grouped.Top1 < p.Timing.Top1 {
		t.Fatalf("grouped top-1 %.3f below one packet's %.3f", p.Grouped.Top1, p.Timing.Top1)
	}
	a, b := f.Answer, f.Back
	if a == nil || b == nil || a.Messages != f.Answers || b.Messages != f.Acks+f.Answers || b.Groups != f.Complete ||
		a.Senders != cfg.Recipients || math.Abs(a.RandomGuess-1/float64(cfg.Recipients)) > 1e-9 {
		t.Fatalf("answers %+v, back %+v", a, b)
	}
	t.Logf("packets: top-1 %.3f; messages: %.3f; answers %.3f; back packets %.3f, per message %.3f",
		p.Timing.Top1, p.Grouped.Top1, a.Timing.Top1, b.Timing.Top1, b.Grouped.Top1)
}

// TestFramedConfig: framed messages are refused beyond the most fragments an acknowledgement
// counts.
func TestFramedConfig(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"too many":  func(c *Config) { c.Fragments = maxFragments + 1 },
		"negative":  func(c *Config) { c.Fragments = -1 },
		"gap":       func(c *Config) { c.Fragments, c.FragmentGap = 4, -1 },
		"answering": func(c *Config) { c.Answer, c.AnswerDelay = true, -time.Second },
	} {
		c := DefaultConfig()
		mut(&c)
		if err := c.Validate(); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := DefaultConfig()
	c.Fragments, c.Ack, c.Answer = 21, true, true
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestFramedInAStream: in a constant-rate stream every packet of a framed message, and every
// packet sent back, waits for a tick of its node's stream; the messages still arrive whole and
// are acknowledged and answered.
func TestFramedInAStream(t *testing.T) {
	cfg := lan(t, func(c *Config) {
		c.Rate, c.SendRate = 4, 20
		c.Fragments, c.FragmentGap, c.Ack, c.Answer = 4, time.Hour, true, true
	})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	f := r.Framed
	// FragmentGap (an hour) does not apply: the ticks send the packets.
	if f.Messages < 25 || f.Complete < f.Messages*9/10 || f.AcksArrived < f.Complete*8/10 || f.AnswersArrived < f.Complete*8/10 {
		t.Fatalf("framed %+v", f)
	}
	if r.QueueMean <= 0 || r.DropSent == 0 || len(s.st.queueDelays) < 4*f.Complete+f.AcksArrived+f.AnswersArrived {
		t.Fatalf("queue mean %v, %d drop packets, %d packets through the queues", r.QueueMean, r.DropSent, len(s.st.queueDelays))
	}
}
