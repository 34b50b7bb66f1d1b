package bench

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idPrefix starts every message text the tool sends.
const idPrefix = "bench:"

// MessageText returns the text of message seq of run: "bench:<run>:<seq>:"
// padded with '.' to size bytes (never shorter than the id itself).
func MessageText(run string, seq, size int) string {
	id := idPrefix + run + ":" + strconv.Itoa(seq) + ":"
	if len(id) >= size {
		return id
	}
	return id + strings.Repeat(".", size-len(id))
}

// ParseMessageText returns the run and sequence number a text of
// MessageText carries; ok is false for any other text.
func ParseMessageText(text string) (run string, seq int, ok bool) {
	rest, found := strings.CutPrefix(text, idPrefix)
	if !found {
		return "", 0, false
	}
	run, rest, found = strings.Cut(rest, ":")
	if !found || run == "" {
		return "", 0, false
	}
	num, _, found := strings.Cut(rest, ":")
	if !found {
		return "", 0, false
	}
	seq, err := strconv.Atoi(num)
	if err != nil || seq < 0 || strconv.Itoa(seq) != num {
		return "", 0, false
	}
	return run, seq, true
}

// sendState is what the API did with a message.
type sendState uint8

const (
	statePending  sendState = iota // not answered yet
	stateAccepted                  // 202
	stateRejected                  // an HTTP error status
	stateFailed                    // no HTTP answer (transport error, timeout)
)

// record is the life of one message.
type record struct {
	state       sendState
	sender      int           // node index
	recipient   int           // node index the message is addressed to
	misrouted   bool          // a message frame of it arrived at another recipient
	sent        time.Time     // the POST was issued
	answered    time.Time     // the API answered
	delivered   time.Time     // the recipient's message frame arrived (zero: not yet)
	nodeLatency time.Duration // the recipient's "Latency: n ms" line; -1: not seen
	received    time.Time     // the time of the recipient's "NODE RECEIVED MESSAGE" line; zero: not seen
}

// tracker matches sends and deliveries of one run by sequence number.
type tracker struct {
	run string

	mu          sync.Mutex
	recs        []record
	issued      int // records in use
	accepted    int
	rejected    int
	failed      int
	delivered   int // distinct messages of this run delivered, whatever their state
	outstanding int // accepted and not delivered
	duplicates  int
	misrouted   int // distinct messages of this run that arrived at a recipient they were not addressed to
	unknown     int // deliveries of this run with a sequence number never issued
	rejections  map[string]int
	doneSending bool
	complete    chan struct{} // closed once sending is done and nothing is outstanding
	closed      bool
}

func newTracker(run string, n int) *tracker {
	t := &tracker{run: run, recs: make([]record, n), rejections: map[string]int{}, complete: make(chan struct{})}
	for i := range t.recs {
		t.recs[i].nodeLatency = -1
	}
	return t
}

// issue records that message seq is being sent by sender to recipient (node
// indexes) at time at; it must be called before the request goes out, as a
// delivery can beat the API's answer.
func (t *tracker) issue(seq, sender, recipient int, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.recs[seq].sender, t.recs[seq].recipient, t.recs[seq].sent = sender, recipient, at
	t.issued = max(t.issued, seq+1)
}

// answer records the API's answer to message seq: accepted, or the reason
// (an HTTP status and error code, or a transport failure) and whether an
// HTTP answer came at all.
func (t *tracker) answer(seq int, at time.Time, accepted bool, reason string, httpAnswer bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &t.recs[seq]
	r.answered = at
	switch {
	case accepted:
		r.state = stateAccepted
		t.accepted++
		if r.delivered.IsZero() {
			t.outstanding++
		}
	case httpAnswer:
		r.state = stateRejected
		t.rejected++
		t.rejections[reason]++
	default:
		r.state = stateFailed
		t.failed++
		t.rejections[reason]++
	}
}

// finishSending records that no further message will be issued.
func (t *tracker) finishSending() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.doneSending = true
	t.checkLocked()
}

// deliver records the message frame of text arriving on node's admin
// server at at; it reports whether text belongs to this run. A message of
// this run arriving at a node it was not addressed to is counted as
// misrouted and is not a delivery: the network handed it to the wrong node.
func (t *tracker) deliver(text string, node int, at time.Time) bool {
	run, seq, ok := ParseMessageText(text)
	if !ok || run != t.run {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq >= t.issued {
		t.unknown++
		return true
	}
	r := &t.recs[seq]
	if node != r.recipient {
		if !r.misrouted {
			r.misrouted = true
			t.misrouted++
		}
		return true
	}
	if !r.delivered.IsZero() {
		t.duplicates++
		return true
	}
	r.delivered = at
	t.delivered++
	if r.state == stateAccepted {
		t.outstanding--
		t.checkLocked()
	}
	return true
}

// nodeLatency records the recipient's own latency figure for text, read on
// node's admin server (ignored unless node is the message's recipient).
func (t *tracker) nodeLatency(text string, node int, d time.Duration) {
	run, seq, ok := ParseMessageText(text)
	if !ok || run != t.run {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq < t.issued && t.recs[seq].recipient == node && t.recs[seq].nodeLatency < 0 {
		t.recs[seq].nodeLatency = d
	}
}

// nodeReceived records when the recipient says it received text (its "NODE RECEIVED MESSAGE"
// line), read on node's admin server (ignored unless node is the message's recipient).
func (t *tracker) nodeReceived(text string, node int, at time.Time) {
	run, seq, ok := ParseMessageText(text)
	if !ok || run != t.run {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if seq < t.issued && t.recs[seq].recipient == node && t.recs[seq].received.IsZero() {
		t.recs[seq].received = at
	}
}

func (t *tracker) checkLocked() {
	if t.doneSending && t.outstanding == 0 && !t.closed {
		t.closed = true
		close(t.complete)
	}
}

// counts is a snapshot of the tracker's counters.
type counts struct {
	Issued, Accepted, Rejected, Failed, Delivered, Outstanding int
}

func (t *tracker) counts() counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return counts{t.issued, t.accepted, t.rejected, t.failed, t.delivered, t.outstanding}
}

// parseNodeLatency reads the recipient's "Latency: <n> ms" line.
func parseNodeLatency(line string) (time.Duration, bool) {
	num, ok := strings.CutPrefix(line, "Latency: ")
	if !ok {
		return 0, false
	}
	num, ok = strings.CutSuffix(num, " ms")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// rejectionReason names an API failure for the report: "HTTP 422
// NOT_ENOUGH_BALANCE", or "HTTP 503" when the body has no error code.
func rejectionReason(status int, code string) string {
	if code == "" {
		return fmt.Sprintf("HTTP %d", status)
	}
	return fmt.Sprintf("HTTP %d %s", status, code)
}
