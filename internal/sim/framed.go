package sim

import (
	"slices"
	"time"

	"github.com/relayd/relayd/internal/observe"
)

// framedMsg is a framed message under way (Config.Fragments, Ack, Answer).
type framedMsg struct {
	id       int
	from, to int
	asked    time.Duration
	left     int // packets not arrived yet
}

// backKind is what a packet sent back on a return path is.
type backKind uint8

const (
	ackBack    backKind = iota // the recipient's acknowledgement of a whole message
	answerBack                 // the recipient's answer
)

// framedStats counts the framed messages and the packets sent back.
type framedStats struct {
	messages, complete               int
	completion                       []time.Duration // from the message's send to its last packet's arrival
	acks, answers, backNoPath        int
	acksArrived, answersArrived      int
	backLost, backRelayers, backSent int
}

// sendFramed starts a framed message from from to to: its packets leave FragmentGap apart, each
// over a path of its own.
func (s *Sim) sendFramed(from, to int, asked time.Duration) {
	m := s.newFramed(from, to, asked)
	for k := range m.left {
		s.after(time.Duration(k)*s.cfg.FragmentGap, func() { s.sendPacket(from, to, asked, m) })
	}
}

// newFramed records a framed message from from to to asked for at asked.
func (s *Sim) newFramed(from, to int, asked time.Duration) *framedMsg {
	m := &framedMsg{id: len(s.framed), from: from, to: to, asked: asked, left: max(1, s.cfg.Fragments)}
	s.framed = append(s.framed, m)
	s.framedStats.messages++
	return m
}

// arrived takes one packet of m at its recipient, p after it reached it (its processing): once
// all have arrived the recipient acknowledges at once and answers after its delay (in a
// stream: queues them for its next ticks).
func (s *Sim) arrived(m *framedMsg, p time.Duration) {
	m.left--
	if m.left != 0 {
		return
	}
	s.framedStats.complete++
	s.framedStats.completion = append(s.framedStats.completion, s.now+p-m.asked)
	back := func(kind backKind) {
		if s.cfg.SendRate > 0 {
			s.enqueue(m.to, pending{to: m.from, asked: s.now, msg: m, back: true, kind: kind})
			return
		}
		s.sendBack(m, kind)
	}
	if s.cfg.Ack {
		s.after(p, func() { back(ackBack) })
	}
	if s.cfg.Answer {
		d := p
		if s.cfg.AnswerDelay > 0 {
			d += time.Duration(s.rng.ExpFloat64() * float64(s.cfg.AnswerDelay))
		}
		s.after(d, func() { back(answerBack) })
	}
}

// sendBack sends one packet from m's recipient to its sender over a return path: relayers
// chosen as for a message (the sender builds the reply block over the recipient's channels to
// itself), paid from the recipient's channel to the first relayer.
func (s *Sim) sendBack(m *framedMsg, kind backKind) {
	st := &s.framedStats
	if kind == ackBack {
		st.acks++
	} else {
		st.answers++
	}
	hops, err := s.pickPath(m.to, m.from)
	if err != nil {
		st.backNoPath++
		return
	}
	first := hops[0]
	if !s.nodes[first].up {
		s.nodes[m.to].down[first] = true
		st.backLost++
		return
	}
	relayers := len(hops) - 1
	if !s.payFirst(m.to, first, relayers) {
		st.backLost++
		return
	}
	st.backSent++
	st.backRelayers += relayers
	f := flight{kind: backPacket, truth: -1, msg: m, back: kind}
	if s.cfg.Observe {
		f.truth = len(s.backTruth)
		s.backTruth = append(s.backTruth, observe.Message{Sender: m.to, Recipient: m.from, Sent: simTime(s.now)})
		s.backKind = append(s.backKind, kind)
		s.backGroup = append(s.backGroup, m.id)
	}
	s.forward(hops, 0, m.to, s.now, f)
}

// backArrived takes a packet sent back at the message's sender, p after it reached it.
func (s *Sim) backArrived(f flight, p time.Duration) {
	if f.truth >= 0 {
		s.backTruth[f.truth].Delivered = simTime(s.now + p)
	}
	if f.back == ackBack {
		s.framedStats.acksArrived++
	} else {
		s.framedStats.answersArrived++
	}
}

// FramedReport is what became of the framed messages (Config.Fragments, Ack, Answer) and what
// the observer learned from the packets sent back.
type FramedReport struct {
	// Fragments is the packets of one message; Messages the framed messages started, Complete
	// those of which every packet arrived; CompleteP50 and CompleteP99 the time from a
	// message's send to its last packet's arrival (nanoseconds in JSON).
	Fragments   int           `json:"fragments"`
	Messages    int           `json:"messages"`
	Complete    int           `json:"complete"`
	CompleteP50 time.Duration `json:"completeP50Ns"`
	CompleteP99 time.Duration `json:"completeP99Ns"`
	// Acks and Answers are the packets the recipients sent back (attempted), AcksArrived and
	// AnswersArrived those that reached the sender; BackNoPath found no return path, BackLost
	// were lost.
	Acks           int `json:"acks"`
	Answers        int `json:"answers"`
	AcksArrived    int `json:"acksArrived"`
	AnswersArrived int `json:"answersArrived"`
	BackNoPath     int `json:"backNoPath"`
	BackLost       int `json:"backLost"`
	// Answer is the observer's trace of the answers from the sender back to their recipient
	// (the candidates are the recipients, who answer), one packet at a time; Back is the same
	// over every packet sent back (acknowledgements and answers), with its Grouped attack
	// combining the packets sent back for one message. Nil without the observer, or when
	// there were none.
	Answer *observe.Report `json:"answer,omitempty"`
	Back   *observe.Report `json:"back,omitempty"`
}

func (s *Sim) framedReport() *FramedReport {
	if !s.cfg.framed() {
		return nil
	}
	st := s.framedStats
	c := slices.Clone(st.completion)
	slices.Sort(c)
	return &FramedReport{Fragments: max(1, s.cfg.Fragments), Messages: st.messages, Complete: st.complete,
		CompleteP50: percentile(c, 0.5), CompleteP99: percentile(c, 0.99),
		Acks: st.acks, Answers: st.answers, AcksArrived: st.acksArrived, AnswersArrived: st.answersArrived,
		BackNoPath: st.backNoPath, BackLost: st.backLost}
}

// observeBack runs the observer on the packets sent back: the answers alone, and every packet
// sent back grouped by message. The candidate senders are the recipients.
func (s *Sim) observeBack(fr *FramedReport) error {
	if len(s.backTruth) == 0 {
		return nil
	}
	opts := s.ObserverOptions()
	opts.Senders = opts.Senders[:0]
	for i := range s.cfg.Recipients {
		opts.Senders = append(opts.Senders, s.cfg.Senders+i)
	}
	opts.Groups = s.backGroup
	back, err := observe.Analyze(s.tx, s.backTruth, opts)
	if err != nil {
		return err
	}
	fr.Back = &back
	if !s.cfg.Answer {
		return nil
	}
	var answers []observe.Message
	for i, m := range s.backTruth {
		if s.backKind[i] == answerBack {
			answers = append(answers, m)
		}
	}
	opts.Groups = nil
	a, err := observe.Analyze(s.tx, answers, opts)
	if err != nil {
		return err
	}
	fr.Answer = &a
	return nil
}
