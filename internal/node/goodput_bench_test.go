package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/bench"
	"github.com/relayd/relayd/internal/packet"
)

// Long messages against the raw paid-packet rate (issue 27, BENCHMARKS.md "Long messages"). Both
// benchmarks run on the four-node network of bench_test.go with channels both ways (A → R1 →
// R2 → B and back, for the acknowledgements), mixing delay 0:
//
//	go test -run '^$' -bench 'RawPaidPackets|Goodput64K' -benchtime 20x -count 6 ./internal/node
//
// -count runs one benchmark's counts in a row, so BenchmarkGoodput64K alternates itself: every
// iteration first sends a burst of one-packet messages as BenchmarkRawPaidPackets does, then one
// 64 KiB message, and the ratio it reports compares the two measured a second apart.

// rawWindow is how many one-packet messages are in flight at once, as in
// BenchmarkMessageThroughput's larger window.
const rawWindow = 64

// rawText is the length of a one-packet message: a whole packet's text.
const rawText = packet.MaxMessageSize

// longBody is the body of the long message: 64 KiB, the default maxMessageBytes.
const longBody = 64 << 10

// rawBurst is one iteration of BenchmarkRawPaidPackets, and the burst before each long message
// of BenchmarkGoodput64K: four such messages' worth of packets (139 fragments and 2
// acknowledgement block parts each).
const rawBurst = 4 * 141

// BenchmarkRawPaidPackets: one-packet messages of 500 bytes from A's REST API over R1 and R2 to B,
// at most rawWindow undelivered at once, rawBurst an iteration; reports packets/s from the first
// send to the last delivery on B's admin stream, and the text they carried per second.
func BenchmarkRawPaidPackets(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and four nodes")
	}
	for _, direct := range []bool{false, true} {
		b.Run(map[bool]string{false: "api", true: "router"}[direct], func(b *testing.B) {
			net := newBenchNetWith(b, true)
			at := &arrivals{}
			net.watchApp(net.b, at)
			var seq atomic.Int64
			var elapsed time.Duration
			n := 0
			for b.Loop() {
				first := int(seq.Load()) + 1
				start := time.Now()
				if err := net.burst(b.Context(), &seq, rawBurst, direct); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				n += rawBurst
				net.settle(b, at, first, int(seq.Load()))
			}
			b.ReportMetric(float64(n)/elapsed.Seconds(), "pkts/s")
			b.ReportMetric(float64(n*rawText)/elapsed.Seconds(), "payload-B/s")
		})
	}
}

// burst sends n one-packet messages of rawText bytes, rawWindow in flight, and waits for every
// delivery on B's admin stream: through A's REST API, or with direct straight to A's router
// (what the courier calls for each fragment, without HTTP).
func (net *benchNet) burst(ctx context.Context, seq *atomic.Int64, n int, direct bool) error {
	work := make(chan struct{})
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range rawWindow {
		wg.Go(func() {
			for range work {
				var d <-chan struct{}
				var err error
				if direct {
					d, err = net.sendDirect(ctx, int(seq.Add(1)), rawText)
				} else {
					d, err = net.sendSized(ctx, int(seq.Add(1)), rawText)
				}
				if err == nil {
					err = await(ctx, d)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					return
				}
			}
		})
	}
	var err error
feed:
	for range n {
		select {
		case work <- struct{}{}:
		case err = <-errs:
			break feed
		}
	}
	close(work)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// settle waits until B's inbox holds the one-packet messages first to last, as its message
// stream shows them, and deletes them as an app that read them would (B keeps at most 10,000
// messages).
func (net *benchNet) settle(b *testing.B, at *arrivals, first, last int) {
	for s := first; s <= last; s++ {
		if err := at.wait(b.Context(), fmt.Sprintf("raw:%d", s)); err != nil {
			b.Fatalf("one-packet message %d not in B's inbox: %v", s, err)
		}
	}
	for _, seq := range at.takeRead() {
		if _, err := net.b.courier.Delete(seq); err != nil {
			b.Fatal(err)
		}
	}
}

// sendDirect sends message seq from A's router to B, as sendSized does through the API.
func (net *benchNet) sendDirect(ctx context.Context, seq, size int) (<-chan struct{}, error) {
	d := make(chan struct{})
	net.deliveries.Store(seq, d)
	if _, err := net.a.router.Send(ctx, net.b.id.PeerID(), bench.MessageText("gobench0", seq, size)); err != nil {
		net.deliveries.Delete(seq)
		return nil, fmt.Errorf("message %d: %w", seq, err)
	}
	return d, nil
}

// BenchmarkGoodput64K: 64 KiB messages from A to B through the courier (POST /messages), one
// at a time, each after a burst of rawBurst one-packet messages on the same network. It reports
// the body's bytes per second from A's 202 to the message in B's inbox (B's message stream
// shows it) and to A's "delivered" event (B's acknowledgement back at A), the raw packets' rate
// and text per second of the bursts, and the ratios of the goodputs to that text rate.
func BenchmarkGoodput64K(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a dev chain and four nodes")
	}
	net := newBenchNetWith(b, true)
	ctx := b.Context()
	at := &arrivals{}
	net.watchApp(net.a, at)
	net.watchApp(net.b, at)
	body := strings.Repeat("0123456789abcdef", longBody/16)
	var (
		seq                     atomic.Int64
		rawPkts                 int
		rawTime                 [2]time.Duration // through the API, straight to the router
		toIn, toDone            time.Duration
		inbox, deliveries       []time.Duration
		messages, rounds, frags int
		paired                  [2][]float64 // per iteration: delivered goodput / that burst's text rate, api and router
	)
	packets0 := courierPackets(b, net.a)
	for b.Loop() {
		// The raw rate, a burst of one-packet messages; then B's inbox takes them all before
		// the long message starts (untimed: a backlog there would delay its fragments).
		first := int(seq.Load()) + 1
		var burst [2]time.Duration
		for i, direct := range []bool{false, true} {
			start := time.Now()
			if err := net.burst(ctx, &seq, rawBurst, direct); err != nil {
				b.Fatal(err)
			}
			burst[i] = time.Since(start)
			rawTime[i] += burst[i]
		}
		rawPkts += rawBurst
		net.settle(b, at, first, int(seq.Load()))

		// The long message.
		text := bench.MessageText(fmt.Sprintf("long%d", messages), 0, 64) + body[64:]
		var id string
		status, raw := net.post(ctx, net.a, "/messages", fmt.Sprintf(`{"body":%q,"recipient":%q}`, text, net.recipient))
		if status != 202 || json.Unmarshal(raw, &id) != nil {
			b.Fatalf("POST /messages: %d %s", status, raw)
		}
		accepted := time.Now()
		if err := at.wait(ctx, "in:"+id); err != nil {
			b.Fatalf("message %s not in B's inbox: %v", id, err)
		}
		if err := at.wait(ctx, "delivered:"+id); err != nil {
			b.Fatalf("message %s not delivered: %v", id, err)
		}
		in, done := at.get("in:"+id).Sub(accepted), at.get("delivered:"+id).Sub(accepted)
		toIn += in
		toDone += done
		inbox = append(inbox, in)
		deliveries = append(deliveries, done)
		for i := range burst {
			paired[i] = append(paired[i], (longBody/done.Seconds())/(rawBurst*rawText/burst[i].Seconds()))
		}
		messages++
		var out struct{ Fragments, Attempts, Acknowledged int }
		status, raw = net.get(ctx, net.a, "/messages/"+id)
		if status != 200 || json.Unmarshal(raw, &out) != nil || out.Acknowledged != out.Fragments {
			b.Fatalf("GET /messages/%s: %d %s", id, status, raw)
		}
		rounds += out.Attempts
		frags += out.Fragments
	}
	inRate := float64(messages*longBody) / toIn.Seconds()
	doneRate := float64(messages*longBody) / toDone.Seconds()
	slices.Sort(inbox)
	slices.Sort(deliveries)
	for i, via := range []string{"api", "router"} {
		rate := float64(rawPkts) / rawTime[i].Seconds()
		payload := rate * rawText
		b.ReportMetric(rate, via+"-pkts/s")
		b.ReportMetric(inRate/payload, "inbox/"+via)
		b.ReportMetric(doneRate/payload, "delivered/"+via)
		slices.Sort(paired[i])
		b.ReportMetric(paired[i][len(paired[i])/2], "paired-p50/"+via)
	}
	b.ReportMetric(float64(courierPackets(b, net.a)-packets0)/float64(messages), "pkts/msg")
	b.ReportMetric(inRate, "inbox-B/s")
	b.ReportMetric(doneRate, "delivered-B/s")
	b.ReportMetric(float64(rounds)/float64(messages), "rounds/msg")
	b.ReportMetric(float64(frags)/float64(messages), "frags/msg")
	b.ReportMetric(float64(bench.Percentile(inbox, 50))/1e6, "inbox-p50-ms")
	b.ReportMetric(float64(bench.Percentile(deliveries, 50))/1e6, "delivered-p50-ms")
}

// arrivals records when keyed events happened ("in:<id>" a message in B's inbox,
// "delivered:<id>" A's delivered event, "raw:<seq>" a one-packet message in B's inbox) and
// lets a benchmark wait for one, whichever comes first.
type arrivals struct {
	m sync.Map // key → *arrival

	mu   sync.Mutex
	read []uint64 // inbox seqs of the one-packet messages seen, not yet deleted
}

// takeRead returns the inbox seqs of the one-packet messages seen since the last call.
func (a *arrivals) takeRead() []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.read
	a.read = nil
	return r
}

type arrival struct {
	once sync.Once
	done chan struct{}
	at   time.Time
}

func (a *arrivals) entry(key string) *arrival {
	e, _ := a.m.LoadOrStore(key, &arrival{done: make(chan struct{})})
	return e.(*arrival)
}

func (a *arrivals) mark(key string, at time.Time) {
	e := a.entry(key)
	e.once.Do(func() { e.at = at; close(e.done) })
}

// wait waits for key, at most 60 s.
func (a *arrivals) wait(ctx context.Context, key string) error {
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	select {
	case <-a.entry(key).done:
		return nil
	case <-t.C:
		return fmt.Errorf("no %s within 60 s", key)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// get is the time of key, which has happened.
func (a *arrivals) get(key string) time.Time { return a.entry(key).at }

// watchApp reads n's message stream (GET /messages/websocket, what an app sees) and marks its
// frames in at.
func (net *benchNet) watchApp(n *Node, at *arrivals) {
	u := "ws://" + n.APIAddr().String() + api.Prefix + "/messages/websocket?apiToken=" + url.QueryEscape(testToken)
	c, _, err := websocket.Dial(net.tb.Context(), u, nil)
	if err != nil {
		net.tb.Fatal(err)
	}
	c.SetReadLimit(4 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	net.tb.Cleanup(func() { cancel(); c.CloseNow(); <-done })
	go func() {
		defer close(done)
		for {
			_, raw, err := c.Read(ctx)
			if err != nil {
				return
			}
			now := time.Now()
			var f struct {
				Type      string
				ID        json.RawMessage
				MessageID string
				Body      string
			}
			if json.Unmarshal(raw, &f) != nil {
				continue
			}
			switch f.Type {
			case "delivered":
				var id string
				if json.Unmarshal(f.ID, &id) == nil {
					at.mark("delivered:"+id, now)
				}
			case "message":
				if run, seq, ok := bench.ParseMessageText(f.Body); ok && run == "gobench0" {
					var inboxSeq uint64
					if json.Unmarshal(f.ID, &inboxSeq) == nil {
						at.mu.Lock()
						at.read = append(at.read, inboxSeq)
						at.mu.Unlock()
					}
					at.mark(fmt.Sprintf("raw:%d", seq), now)
				} else if ok {
					at.mark("in:"+f.MessageID, now)
				}
			}
		}
	}()
}

// get is a GET on n's REST API.
func (net *benchNet) get(ctx context.Context, n *Node, path string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.APIAddr().String()+api.Prefix+path, nil)
	if err != nil {
		net.tb.Fatal(err)
	}
	req.Header.Set("x-auth-token", testToken)
	resp, err := net.client.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// courierPackets reads n's relayd_courier_packets_sent_total: the fragments and acknowledgement
// block parts its courier sent.
func courierPackets(tb testing.TB, n *Node) int {
	mfs, err := n.reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "relayd_courier_packets_sent_total" {
			return int(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	tb.Fatal("no relayd_courier_packets_sent_total")
	return 0
}
