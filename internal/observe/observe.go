package observe

import (
	"errors"
	"time"
)

// ErrNoInput: nothing to analyse (no transmissions, no messages or no candidate senders).
var ErrNoInput = errors.New("observe: nothing to analyse")

// Transmission is one unit of data an observer sees on a link: from the capture, one IP packet
// (its transport payload); from the simulation, one frame.
type Transmission struct {
	// Time is when it left From (captured on From's side of the link).
	Time time.Time
	// From and To are the hosts at the link's ends (node indexes).
	From, To int
	// Size is the payload's length in bytes (TCP or UDP payload; 0-byte packets are not kept).
	Size int
}

// Message is the ground truth of one message: which node sent it to which, and when.
type Message struct {
	Sender, Recipient int
	// Sent is when the sender's API was asked to send it; Delivered when the recipient had it
	// (zero: never delivered, then it is not scored).
	Sent, Delivered time.Time
}

// Delay is the public distribution of a relayer's delay between receiving a packet and
// sending it on: Min plus an exponential draw of mean Mean (capped at Max), plus the
// processing and link time, modelled as uniform in [0, Jitter].
type Delay struct {
	Min, Mean, Max time.Duration
	Jitter         time.Duration
}

// Options tune the observer.
type Options struct {
	// Delay is the hop delay the attacks assume (the network's configuration is public).
	Delay Delay
	// Senders are the candidate senders (the observer knows who sends); empty: every
	// message's sender in the ground truth.
	Senders []int
	// FlightGap joins transmissions on one link direction less than this apart into one
	// flight (a frame split into several IP packets); 0 keeps each transmission alone (the
	// simulation's frames).
	FlightGap time.Duration
	// MessageSize is the size of a flight carrying one message packet; 0 learns it from the
	// traffic (the most common flight size above MinMessageSize).
	MessageSize int
	// ThreeRelayerShare is the observer's prior that a path has three relayers instead of two
	// (the node falls back to three when two do not reach the recipient).
	ThreeRelayerShare float64
	// MaxScored, when positive, scores only that many delivered messages, spread evenly over
	// the run (large simulations).
	MaxScored int
	// LongTerm tunes the patient observer's attacks (LongTerm), which Analyze runs too.
	LongTerm LongTermOptions
	// Groups, when not nil, has one entry per message: messages with the same non-negative
	// entry are packets of one framed message (its fragments, docs/PROTOCOL.md §8), from one
	// sender to one recipient; -1 is a packet alone. The grouped attack (Report.Grouped)
	// combines the timing traces of a group's scored packets. The observer is given the
	// grouping from the ground truth: an upper bound on one who groups a burst by its timing.
	Groups []int
}

// Report is what the attacks achieved.
type Report struct {
	// Messages is the number of delivered messages scored; Senders the number of candidates.
	Messages, Senders int
	// MaxEntropy is log2 of the number of candidate senders (of a message: the recipient is
	// never its own sender); RandomGuess the top-1 rate of a uniform guess.
	MaxEntropy  float64
	RandomGuess float64
	// Timing and Size are the two attacks' results.
	Timing, Size AttackResult
	// Grouped is the timing attack with the traces of each group's scored packets combined
	// (Options.Groups; empty without): per group, the product of the packets' distributions
	// over the senders, each first mixed with 1 % of the uniform one so that no single trace
	// rules a sender out. PerMessage's Index is the group's first scored packet; Groups is how
	// many groups were scored, GroupMaxEntropy their mean log2 of the candidates and
	// GroupRandomGuess the mean top-1 rate of a uniform guess.
	Grouped          AttackResult `json:",omitzero"`
	Groups           int          `json:",omitempty"`
	GroupMaxEntropy  float64      `json:",omitempty"`
	GroupRandomGuess float64      `json:",omitempty"`
	// MessageSize is the flight size taken as one message packet; SizeClasses counts the
	// flights by size (bytes → flights), the first 16 sizes by count.
	MessageSize int
	SizeClasses []SizeCount
	// MessageClasses are the message sizes the size attack tells apart (one: every message
	// packet looks alike on the wire, and the size attack is the timing attack).
	MessageClasses []int
	// LongTerm is what the patient observer's counting attacks learned (LongTerm).
	LongTerm LongTermReport
}

// AttackResult is one attack over every scored message.
type AttackResult struct {
	// MeanEntropy is the mean over the messages of the entropy (bits) of the observer's
	// distribution over senders; EntropyShare is MeanEntropy / MaxEntropy.
	MeanEntropy, EntropyShare float64
	// Top1 is the share of messages whose most likely sender is the true one (ties split);
	// Top1OverRandom is Top1 / RandomGuess.
	Top1, Top1OverRandom float64
	// PerMessage holds each scored message's entropy and top-1 outcome, in Message order.
	PerMessage []MessageScore `json:",omitempty"`
}

// MessageScore is one message's outcome.
type MessageScore struct {
	Index   int     // into the Messages given to Analyze
	Entropy float64 // bits
	Top1    float64 // 1 if the true sender was the unique most likely one, 1/k if among k tied, else 0
}

// SizeCount is how many flights had a size.
type SizeCount struct {
	Size, Count int
}
