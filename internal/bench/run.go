package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// MaxMessageSize is the longest message text one packet carries (bytes): a longer one the
// node sends as a framed message through its courier.
const MaxMessageSize = 500

// MaxBodySize is the longest message text the tool sends: a node's default maxMessageBytes,
// 64 KiB, which its courier sends as fragments (docs/PROTOCOL.md §8).
const MaxBodySize = 64 << 10

// MaxReplies is the most reply blocks a message may ask for (courier.MaxReplies).
const MaxReplies = 16

// Config configures a Run. Env, Senders, Recipient or Recipients (one of
// the two) and Messages are required; zero values of the rest take the
// defaults noted.
type Config struct {
	Env     Env
	Senders []int // 1-based indexes of the nodes that send
	// Recipient is the 1-based index of the one recipient; Recipients
	// names several instead. Messages go round robin over every (sender,
	// recipient) pair: message seq is sent by Senders[seq%len(Senders)] to
	// Recipients[(seq/len(Senders))%len(Recipients)].
	Recipient  int
	Recipients []int
	Messages   int // how many messages to send in total
	// Rate is the send rate over all senders in messages per second; 0
	// sends as fast as the API accepts within Concurrency.
	Rate float64
	// Patient, when set, replaces the round robin and Rate: each sender writes to one fixed
	// correspondent among the recipients, in on/off bursts (Patient.Schedule's first Messages
	// messages, each sent at its time).
	Patient *Patient
	// Concurrency bounds the POST requests in flight (default 16).
	Concurrency int
	// Size is the message text's length in bytes (default 100, at most
	// MaxBodySize; never shorter than the id, about 20 bytes). Beyond MaxMessageSize the
	// sender's courier sends it as a framed message of several packets (the nodes need their
	// inbox), delivered when it is whole.
	Size int
	// Replies is how many reply blocks go with every message ("replies" of POST /messages,
	// at most MaxReplies): above 0 the message is a framed one, whatever its size.
	Replies int
	// Timeout is how long to wait for stragglers once every request has
	// been answered (default 30 s).
	Timeout time.Duration
	// MaxDuration bounds the sending phase; messages not sent by then are
	// reported as not sent (default 10 min).
	MaxDuration time.Duration
	// RequestTimeout bounds one POST (default 15 s).
	RequestTimeout time.Duration
	// ScrapeInterval is how often every node's metrics are read during the
	// run for the peak RSS (default 1 s).
	ScrapeInterval time.Duration
	// Progress, if set, is called with a snapshot every ProgressInterval
	// (default 500 ms) from one goroutine, and once at the end.
	Progress         func(Progress)
	ProgressInterval time.Duration
	// HTTPClient makes every REST call (default: a client whose transport
	// keeps Concurrency connections per node).
	HTTPClient *http.Client
	// FloorRounds is how many rounds of the unavoidable public-key work (Floor) the tool times
	// right before and right after the load, on one goroutine (default 1000, about 0.15–0.3 s
	// each time; negative: no floor and no Cost in the report).
	FloorRounds int
	// Relayers fixes the mean relayers per message for the sender's floor; 0 infers it from
	// the nodes' relay counters.
	Relayers float64
	// Clock times the run (default SystemClock).
	Clock Clock
	// RunID names the run in every message text (default: 8 random hex
	// digits).
	RunID string

	ownClient bool // HTTPClient was made by Run: close its connections at the end
}

// Progress is a snapshot of a run.
type Progress struct {
	Elapsed   time.Duration
	Phase     string // "sending", "waiting" or "done"
	Total     int    // messages to send
	Issued    int    // requests made
	Accepted  int
	Rejected  int // HTTP errors and transport failures
	Delivered int
}

// Sample is one message's timeline, for plots.
type Sample struct {
	Seq       int
	Sender    int
	Recipient int
	SentAt    time.Duration // since the run started
	Accepted  bool
	Delivered bool
	Latency   time.Duration // send to delivery; 0 unless Delivered
	// Received is when the recipient says it received the message (the time in its "NODE
	// RECEIVED MESSAGE" line, truncated to the millisecond); zero when it said nothing. The
	// tool's own delivery time comes later by the node's inbox write and the admin WebSocket:
	// tens of milliseconds for a framed message.
	Received time.Time
}

// Report is the outcome of a run; its JSON form is `relayctl bench --json`.
type Report struct {
	RunID       string    `json:"runId"`
	Start       time.Time `json:"start"`
	Senders     []int     `json:"senders"`
	Recipient   int       `json:"recipient,omitempty"` // the recipient when there is one
	Recipients  []int     `json:"recipients"`
	Messages    int       `json:"messages"`
	Rate        float64   `json:"rate"` // asked for; 0 = as fast as possible
	Concurrency int       `json:"concurrency"`
	Size        int       `json:"size"`
	Replies     int       `json:"replies,omitempty"`

	// Patient is the workload of patient senders, when the run had it, and Correspondents each
	// sender's correspondent in it.
	Patient        *Patient    `json:"patient,omitempty"`
	Correspondents map[int]int `json:"correspondents,omitempty"`

	Attempted     int            `json:"attempted"`     // requests made
	NotSent       int            `json:"notSent"`       // never attempted (MaxDuration passed or the run was stopped)
	Sent          int            `json:"sent"`          // accepted by the API (202)
	Rejected      int            `json:"rejected"`      // HTTP errors and transport failures
	Rejections    map[string]int `json:"rejections"`    // by "HTTP <status> <code>" or "transport: …"
	Delivered     int            `json:"delivered"`     // accepted messages that arrived at their recipient
	Lost          int            `json:"lost"`          // accepted, never arrived at their recipient within Timeout
	Misrouted     int            `json:"misrouted"`     // arrived at a recipient they were not addressed to (a bug)
	DeliveryRatio float64        `json:"deliveryRatio"` // Delivered / Sent
	Unexpected    int            `json:"unexpected"`    // arrived although the API did not accept them
	Duplicates    int            `json:"duplicates"`    // message frames seen twice (replays after a reconnect included)
	Foreign       int            `json:"foreign"`       // message frames that were not this run's
	WSReconnects  int            `json:"wsReconnects"`  // over every recipient's admin connection

	// PerRecipient splits the counts by recipient, in the order of
	// Recipients.
	PerRecipient []RecipientCounts `json:"perRecipient"`

	Latency     Summary `json:"latency"`     // tool's send to the recipient's message frame
	NodeLatency Summary `json:"nodeLatency"` // the recipient's own "Latency: n ms" (ms resolution)
	APILatency  Summary `json:"apiLatency"`  // POST to its answer, accepted messages

	SendSeconds        float64 `json:"sendSeconds"`        // first request to last answer
	DeliverSeconds     float64 `json:"deliverSeconds"`     // first request to last delivery
	TotalSeconds       float64 `json:"totalSeconds"`       // whole run, waiting included
	SentPerSecond      float64 `json:"sentPerSecond"`      // Sent / SendSeconds
	DeliveredPerSecond float64 `json:"deliveredPerSecond"` // Delivered / DeliverSeconds

	Nodes []NodeUsage `json:"nodes"`
	// ToolCPUSeconds is the CPU this tool used during the run (it shares
	// the machine with a local network).
	ToolCPUSeconds float64 `json:"toolCpuSeconds"`
	// HostBusyPercent is how busy the machine's CPUs were during the run
	// (Linux /proc/stat; 100 = all CPUs all the time), -1 when unknown.
	HostBusyPercent float64 `json:"hostBusyPercent"`

	// Cost is each role's CPU per packet against the floor timed in the same run (nil when
	// Config.FloorRounds is negative).
	Cost *Cost `json:"cost,omitempty"`

	Samples []Sample `json:"-"`

	// Churn splits the messages by the churn of the network, when the tool was given its log
	// (relayctl bench --churnLog).
	Churn *ChurnSplit `json:"churn,omitempty"`
}

// RecipientCounts are the counts of the messages addressed to one
// recipient.
type RecipientCounts struct {
	Node      int `json:"node"`
	Attempted int `json:"attempted"`
	Sent      int `json:"sent"` // accepted by the API
	Rejected  int `json:"rejected"`
	Delivered int `json:"delivered"`
	Lost      int `json:"lost"`
	Misrouted int `json:"misrouted"` // arrived at another recipient
}

func (c *Config) setDefaults() error {
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.Size <= 0 {
		c.Size = 100
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = 10 * time.Minute
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 15 * time.Second
	}
	if c.ScrapeInterval <= 0 {
		c.ScrapeInterval = time.Second
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 500 * time.Millisecond
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.FloorRounds == 0 {
		c.FloorRounds = 1000
	}
	if c.RunID == "" {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("run id: %w", err)
		}
		c.RunID = hex.EncodeToString(b[:])
	}
	if c.HTTPClient == nil {
		c.ownClient = true
		c.HTTPClient = &http.Client{Transport: &http.Transport{
			MaxIdleConns:        4 * c.Concurrency,
			MaxIdleConnsPerHost: c.Concurrency + 2,
			IdleConnTimeout:     30 * time.Second,
		}}
	}
	return nil
}

func (c *Config) validate() error {
	switch {
	case len(c.Env.Nodes) < 2:
		return errors.New("the network needs at least 2 nodes")
	case c.Messages < 1 || c.Messages > 10_000_000:
		return fmt.Errorf("messages must be between 1 and 10,000,000, not %d", c.Messages)
	case c.Rate < 0:
		return fmt.Errorf("rate must not be negative, not %g", c.Rate)
	case c.Relayers < 0 || c.Relayers > 10:
		return fmt.Errorf("relayers must be between 0 (infer) and 10, not %g", c.Relayers)
	case c.Concurrency > 4096:
		return fmt.Errorf("concurrency must be at most 4096, not %d", c.Concurrency)
	case c.Size > MaxBodySize:
		return fmt.Errorf("size must be at most %d bytes (the nodes' default maxMessageBytes), not %d", MaxBodySize, c.Size)
	case c.Replies < 0 || c.Replies > MaxReplies:
		return fmt.Errorf("replies must be between 0 and %d, not %d", MaxReplies, c.Replies)
	case len(c.Senders) == 0:
		return errors.New("no sender")
	case c.Recipient != 0 && len(c.Recipients) > 0:
		return errors.New("name the recipient or the recipients, not both")
	case c.Recipient == 0 && len(c.Recipients) == 0:
		return errors.New("no recipient")
	}
	if c.Patient != nil {
		if err := c.Patient.Validate(); err != nil {
			return err
		}
	}
	if c.Recipient != 0 {
		c.Recipients = []int{c.Recipient}
	}
	recipients := map[int]bool{}
	for _, r := range c.Recipients {
		if _, err := c.Env.Node(r); err != nil {
			return fmt.Errorf("recipient: %w", err)
		}
		if recipients[r] {
			return fmt.Errorf("node %d is named twice as a recipient", r)
		}
		recipients[r] = true
	}
	seen := map[int]bool{}
	for _, s := range c.Senders {
		if _, err := c.Env.Node(s); err != nil {
			return fmt.Errorf("sender: %w", err)
		}
		if recipients[s] {
			return fmt.Errorf("node %d cannot be both a sender and a recipient", s)
		}
		if seen[s] {
			return fmt.Errorf("node %d is named twice as a sender", s)
		}
		seen[s] = true
	}
	if len(c.Recipients) == 1 {
		c.Recipient = c.Recipients[0]
	}
	return nil
}

// DefaultSenders returns the first n node indexes that are not among
// recipients.
func DefaultSenders(env Env, n int, recipients ...int) ([]int, error) {
	var out []int
	for i := 1; i <= len(env.Nodes) && len(out) < n; i++ {
		if !slices.Contains(recipients, i) {
			out = append(out, i)
		}
	}
	if len(out) < n || n < 1 {
		return nil, fmt.Errorf("cannot pick %d senders among the %d nodes that do not receive", n, len(env.Nodes)-len(recipients))
	}
	return out, nil
}

// DefaultRecipients returns the indexes of the last n nodes, leaving at
// least one node to send.
func DefaultRecipients(env Env, n int) ([]int, error) {
	if n < 1 || n >= len(env.Nodes) {
		return nil, fmt.Errorf("cannot pick %d recipients among %d nodes: between 1 and %d leave a node to send", n, len(env.Nodes), len(env.Nodes)-1)
	}
	var out []int
	for i := len(env.Nodes) - n + 1; i <= len(env.Nodes); i++ {
		out = append(out, i)
	}
	return out, nil
}

// Run connects to every recipient's admin WebSocket, sends cfg.Messages
// messages through the senders' REST APIs, waits for their delivery (at
// most cfg.Timeout after the last answer) and reports. It returns an error
// only when the run could not be made (bad configuration, a recipient's
// admin server unreachable); API failures and losses are in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if cfg.ownClient {
		// A connection the transport dialled but never used would hold up a
		// node's graceful shutdown.
		defer cfg.HTTPClient.CloseIdleConnections()
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	r := newRun(cfg)
	if err := r.dialWatchers(ctx); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}

	// Everything below ends with runCtx.
	runCtx, stopRun := context.WithCancel(ctx)
	defer r.bg.Wait()
	defer stopRun()
	r.watch(runCtx)
	// The floor is timed while the network is idle, before the first scrape and after the
	// last, so neither the nodes' nor this tool's figures include it.
	r.measureFloor(&r.floorBefore)
	r.scrapeAll(runCtx)
	r.startClock()
	stopScraping := r.scrapeEvery(runCtx)
	r.reportProgress(runCtx)
	r.send(runCtx)
	r.waitForStragglers(runCtx)
	r.stopClock()
	stopScraping()
	r.finalScrape(ctx)
	r.measureFloor(&r.floorAfter)
	stopRun()
	r.bg.Wait()

	if cfg.Progress != nil {
		cfg.Progress(r.progress())
	}
	return r.report(ctx)
}

// run is what the stages of one Run share. Run calls them in the order they
// appear below.
type run struct {
	cfg    Config // defaults set and validated
	tr     *tracker
	usages []*usage // one per node, in the order of cfg.Env.Nodes
	phase  phaseBox

	// watchers has one admin connection per recipient, in the order of
	// cfg.Recipients. watchResults[i] is written by watcher i's goroutine and
	// read after bg.Wait; watchFailed is closed once an admin connection is
	// gone for good.
	watchers     []*watcher
	watchResults []watchResult
	watchFailed  chan struct{}

	bg sync.WaitGroup // the watchers and the progress reporter

	floorBefore, floorAfter Floor
	floorErr                error // the first floor that could not be timed; no Cost then

	start, end         time.Time // the first scrape's end and the end of the wait
	hostStart, hostEnd hostCPU
	selfStart, selfEnd time.Duration
}

func newRun(cfg Config) *run {
	r := &run{
		cfg:         cfg,
		tr:          newTracker(cfg.RunID, cfg.Messages),
		usages:      make([]*usage, len(cfg.Env.Nodes)),
		phase:       phaseBox{v: "sending"},
		watchFailed: make(chan struct{}),
	}
	for i, n := range cfg.Env.Nodes {
		r.usages[i] = &usage{node: n}
	}
	return r
}

// dialWatchers connects to every recipient's admin server, so that all are
// registered before the first message goes out. On an error it closes the
// connections it made.
func (r *run) dialWatchers(ctx context.Context) error {
	for _, i := range r.cfg.Recipients {
		node, _ := r.cfg.Env.Node(i)
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		w, err := dialWatcher(dctx, node.Index, node.WSURL, r.cfg.Env.APIToken, r.tr, r.cfg.Clock)
		cancel()
		if err != nil {
			for _, w := range r.watchers {
				w.close()
			}
			return fmt.Errorf("recipient node %d: %w", node.Index, err)
		}
		r.watchers = append(r.watchers, w)
	}
	return nil
}

// watch reads every admin connection in r.bg until ctx ends (watchLoop),
// closing r.watchFailed once one is gone for good.
func (r *run) watch(ctx context.Context) {
	r.watchResults = make([]watchResult, len(r.watchers))
	var failOnce sync.Once
	for i, w := range r.watchers {
		node, _ := r.cfg.Env.Node(w.node)
		r.bg.Go(func() {
			r.watchResults[i] = watchLoop(ctx, w, node.WSURL, r.cfg.Env.APIToken, r.tr, r.cfg.Clock)
			if r.watchResults[i].err != nil {
				failOnce.Do(func() { close(r.watchFailed) })
			}
		})
	}
}

// measureFloor times the floor into f, unless the run times no floor
// (cfg.FloorRounds negative) or an earlier floor failed.
func (r *run) measureFloor(f *Floor) {
	if r.cfg.FloorRounds > 0 && r.floorErr == nil {
		*f, r.floorErr = MeasureFloor(r.cfg.FloorRounds)
	}
}

// scrapeAll reads every node's metrics once, concurrently, each read bounded
// by 5 s and by ctx.
func (r *run) scrapeAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, u := range r.usages {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			u.scrape(sctx, r.cfg.HTTPClient, r.cfg.Env.APIToken)
		})
	}
	wg.Wait()
}

// startClock marks the start of the measured run: the wall clock, the host's
// CPU and this process's.
func (r *run) startClock() {
	r.start = r.cfg.Clock.Now()
	r.hostStart, r.selfStart = readHostCPU(), selfCPU()
}

// scrapeEvery scrapes every node each cfg.ScrapeInterval until stop is
// called. The scrapes stop between two scrapes, never in the middle of one:
// stop returns once the last has ended, so the last scrape is the last the
// nodes see.
func (r *run) scrapeEvery(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r.cfg.Clock.Sleep(ctx, r.cfg.ScrapeInterval) == nil {
			r.scrapeAll(context.WithoutCancel(ctx))
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// reportProgress calls cfg.Progress, if set, every cfg.ProgressInterval from
// one goroutine in r.bg until ctx ends.
func (r *run) reportProgress(ctx context.Context) {
	if r.cfg.Progress == nil {
		return
	}
	r.bg.Go(func() {
		for r.cfg.Clock.Sleep(ctx, r.cfg.ProgressInterval) == nil {
			r.cfg.Progress(r.progress())
		}
	})
}

// progress is a snapshot of the run since startClock.
func (r *run) progress() Progress {
	c := r.tr.counts()
	return Progress{Elapsed: r.cfg.Clock.Now().Sub(r.start), Phase: r.phase.get(), Total: r.cfg.Messages, Issued: c.Issued,
		Accepted: c.Accepted, Rejected: c.Rejected + c.Failed, Delivered: c.Delivered}
}

// send issues the messages until all are issued or cfg.MaxDuration has
// passed, and returns once every request has been answered (sendAll).
func (r *run) send(ctx context.Context) {
	sendCtx, stopSending := context.WithTimeout(ctx, r.cfg.MaxDuration)
	sendAll(sendCtx, ctx, r.cfg, r.tr)
	stopSending()
	r.tr.finishSending()
}

// waitForStragglers waits until every accepted message has arrived, at most
// cfg.Timeout, and no longer once an admin connection is gone for good (the
// run fails then).
func (r *run) waitForStragglers(ctx context.Context) {
	r.phase.set("waiting")
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	select {
	case <-r.tr.complete:
	case <-ctx.Done():
	case <-r.watchFailed:
	}
}

// stopClock marks the end of the measured run; the phase is "done" from then
// on.
func (r *run) stopClock() {
	r.end = r.cfg.Clock.Now()
	r.hostEnd, r.selfEnd = readHostCPU(), selfCPU()
	r.phase.set("done")
}

// finalScrape reads every node's metrics once more, within 5 s, even when
// ctx has ended: the CPU a node used is the difference between its first and
// last scrape.
func (r *run) finalScrape(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	r.scrapeAll(ctx)
}

// report builds the report once every goroutine of the run has ended. The
// report comes with an error when an admin connection was gone for good, a
// floor could not be timed (no Cost then) or ctx ended (the run was stopped).
func (r *run) report(ctx context.Context) (*Report, error) {
	rep := buildReport(r.cfg, r.tr, r.start, r.end, r.usages)
	if r.cfg.FloorRounds > 0 && r.floorErr == nil {
		cost := Costs(rep.Nodes, rep.Delivered, r.floorBefore, r.floorAfter, r.cfg.Relayers)
		rep.Cost = &cost
	}
	var wsErrs []error
	for i, wr := range r.watchResults {
		rep.Foreign += wr.foreign
		rep.WSReconnects += wr.reconnects
		if wr.err != nil {
			wsErrs = append(wsErrs, fmt.Errorf("recipient node %d: %w", r.watchers[i].node, wr.err))
		}
	}
	rep.ToolCPUSeconds = (r.selfEnd - r.selfStart).Seconds()
	rep.HostBusyPercent = busyPercent(r.hostStart, r.hostEnd)
	if err := errors.Join(append(wsErrs, r.floorErr)...); err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("bench: stopped: %w", err)
	}
	return rep, nil
}

// maxReconnects bounds how often the admin connection is re-established in
// one run (the node drops a client that falls behind).
const maxReconnects = 3

type watchResult struct {
	foreign, reconnects int
	err                 error
}

// watchLoop runs w until ctx ends, reconnecting a lost connection at most
// maxReconnects times (the node's replay of its last 100 frames then covers
// part of the gap; duplicates are ignored).
func watchLoop(ctx context.Context, w *watcher, url, token string, tr *tracker, clock Clock) watchResult {
	var res watchResult
	for {
		err := w.run(ctx)
		w.close()
		res.foreign += w.foreign
		if err == nil {
			return res
		}
		if res.reconnects >= maxReconnects {
			res.err = err
			return res
		}
		res.reconnects++
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		w2, derr := dialWatcher(dctx, w.node, url, token, tr, clock)
		cancel()
		if derr != nil {
			if ctx.Err() != nil {
				return res
			}
			res.err = fmt.Errorf("%w; reconnect: %w", err, derr)
			return res
		}
		w = w2
	}
}

type phaseBox struct {
	mu sync.Mutex
	v  string
}

func (p *phaseBox) get() string { p.mu.Lock(); defer p.mu.Unlock(); return p.v }
func (p *phaseBox) set(v string) {
	p.mu.Lock()
	p.v = v
	p.mu.Unlock()
}

// sendAll issues the messages at cfg.Rate (or at the times of cfg.Patient's schedule) with
// at most cfg.Concurrency requests in flight until all are issued or sendCtx ends, then waits
// for every request it made (each bounded by cfg.RequestTimeout, and by runCtx).
func sendAll(sendCtx, runCtx context.Context, cfg Config, tr *tracker) {
	lim := NewLimiter(cfg.Rate, max(1, int(cfg.Rate/100)), cfg.Clock)
	var schedule []Send
	if cfg.Patient != nil {
		schedule, _ = cfg.Patient.Schedule(cfg.Senders, cfg.Recipients, cfg.Messages) // validated
	}
	begin := cfg.Clock.Now()
	sem := make(chan struct{}, cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for seq := 0; seq < cfg.Messages; seq++ {
		var sender, recipient Node
		if schedule != nil {
			next := schedule[seq]
			if cfg.Clock.Sleep(sendCtx, begin.Add(next.At).Sub(cfg.Clock.Now())) != nil {
				return
			}
			sender, _ = cfg.Env.Node(next.Sender)
			recipient, _ = cfg.Env.Node(next.Recipient)
		} else {
			if lim.Wait(sendCtx) != nil {
				return
			}
			sender, recipient = pair(cfg, seq)
		}
		select {
		case sem <- struct{}{}:
		case <-sendCtx.Done():
			return
		}
		text := MessageText(cfg.RunID, seq, cfg.Size)
		tr.issue(seq, sender.Index, recipient.Index, cfg.Clock.Now())
		wg.Go(func() {
			defer func() { <-sem }()
			ok, reason, httpAnswer := post(runCtx, cfg, sender, recipient.PeerID, text, cfg.Replies)
			tr.answer(seq, cfg.Clock.Now(), ok, reason, httpAnswer)
		})
	}
}

// pair returns the sender and recipient of message seq: round robin over the
// senders, and over the recipients once per round of senders, so every
// sender sends to every recipient in turn.
func pair(cfg Config, seq int) (sender, recipient Node) {
	ns := len(cfg.Senders)
	sender, _ = cfg.Env.Node(cfg.Senders[seq%ns])
	recipient, _ = cfg.Env.Node(cfg.Recipients[(seq/ns)%len(cfg.Recipients)])
	return sender, recipient
}

// post sends one message with replies reply blocks and reports whether the API accepted it,
// and if not why and whether an HTTP answer came at all.
func post(ctx context.Context, cfg Config, sender Node, recipient, text string, replies int) (accepted bool, reason string, httpAnswer bool) {
	ctx, cancel := context.WithTimeout(ctx, cfg.RequestTimeout)
	defer cancel()
	body, _ := json.Marshal(struct {
		Body      string `json:"body"`
		Recipient string `json:"recipient"`
		Replies   int    `json:"replies,omitempty"`
	}{text, recipient, replies})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sender.APIURL+"/api/v2/messages", bytes.NewReader(body))
	if err != nil {
		return false, "request: " + err.Error(), false
	}
	req.Header.Set("x-auth-token", cfg.Env.APIToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := cfg.HTTPClient.Do(req)
	if err != nil {
		return false, transportReason(err), false
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusAccepted {
		return true, "", true
	}
	var e struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &e) // a body without a code is reported by status alone
	return false, rejectionReason(resp.StatusCode, e.Status), true
}

// transportReason groups transport failures coarsely for the report.
func transportReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "transport: request timeout"
	case errors.Is(err, context.Canceled):
		return "transport: canceled"
	}
	return "transport: " + err.Error()
}

func buildReport(cfg Config, tr *tracker, start, end time.Time, usages []*usage) *Report {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	rep := &Report{
		RunID: cfg.RunID, Start: start, Senders: cfg.Senders, Recipient: cfg.Recipient, Recipients: cfg.Recipients, Messages: cfg.Messages,
		Rate: cfg.Rate, Patient: cfg.Patient, Concurrency: cfg.Concurrency, Size: len(MessageText(cfg.RunID, 0, cfg.Size)), Replies: cfg.Replies,
		Attempted: tr.issued, NotSent: cfg.Messages - tr.issued, Sent: tr.accepted,
		Rejected: tr.rejected + tr.failed, Rejections: map[string]int{}, Duplicates: tr.duplicates, Misrouted: tr.misrouted,
		TotalSeconds: end.Sub(start).Seconds(),
	}
	for k, v := range tr.rejections {
		rep.Rejections[k] = v
	}
	if cfg.Patient != nil {
		rep.Rate = 0
		rep.Correspondents = cfg.Patient.Correspondents(cfg.Senders, cfg.Recipients)
	}
	per := map[int]*RecipientCounts{}
	for _, r := range cfg.Recipients {
		rep.PerRecipient = append(rep.PerRecipient, RecipientCounts{Node: r})
	}
	for i := range rep.PerRecipient {
		per[rep.PerRecipient[i].Node] = &rep.PerRecipient[i]
	}
	var lat, nodeLat, apiLat []time.Duration
	var first, lastAnswer, lastDelivery time.Time
	for seq := 0; seq < tr.issued; seq++ {
		r := tr.recs[seq]
		if first.IsZero() || r.sent.Before(first) {
			first = r.sent
		}
		if r.answered.After(lastAnswer) {
			lastAnswer = r.answered
		}
		s := Sample{Seq: seq, Sender: r.sender, Recipient: r.recipient, SentAt: r.sent.Sub(start), Accepted: r.state == stateAccepted}
		pr := per[r.recipient] // never nil: every issued message is addressed to one of cfg.Recipients
		pr.Attempted++
		switch r.state {
		case stateAccepted:
			pr.Sent++
		case stateRejected, stateFailed:
			pr.Rejected++
		}
		if r.misrouted {
			pr.Misrouted++
		}
		delivered := !r.delivered.IsZero()
		switch {
		case r.state == stateAccepted && delivered:
			rep.Delivered++
			pr.Delivered++
			s.Delivered, s.Latency = true, r.delivered.Sub(r.sent)
			s.Received = r.received
			lat = append(lat, s.Latency)
			if r.nodeLatency >= 0 {
				nodeLat = append(nodeLat, r.nodeLatency)
			}
			if r.delivered.After(lastDelivery) {
				lastDelivery = r.delivered
			}
		case r.state == stateAccepted:
			rep.Lost++
			pr.Lost++
		case delivered:
			rep.Unexpected++
		}
		if r.state == stateAccepted {
			apiLat = append(apiLat, r.answered.Sub(r.sent))
		}
		rep.Samples = append(rep.Samples, s)
	}
	rep.Latency, rep.NodeLatency, rep.APILatency = Summarize(lat), Summarize(nodeLat), Summarize(apiLat)
	if rep.Sent > 0 {
		rep.DeliveryRatio = float64(rep.Delivered) / float64(rep.Sent)
	}
	if !first.IsZero() {
		if d := lastAnswer.Sub(first).Seconds(); d > 0 {
			rep.SendSeconds = d
			rep.SentPerSecond = float64(rep.Sent) / d
		}
		if d := lastDelivery.Sub(first).Seconds(); d > 0 {
			rep.DeliverSeconds = d
			rep.DeliveredPerSecond = float64(rep.Delivered) / d
		}
	}
	senders := map[int]bool{}
	for _, s := range cfg.Senders {
		senders[s] = true
	}
	wall := end.Sub(start).Seconds()
	for _, u := range usages {
		role := "relayer"
		switch {
		case senders[u.node.Index]:
			role = "sender"
		case slices.Contains(cfg.Recipients, u.node.Index):
			role = "recipient"
		}
		rep.Nodes = append(rep.Nodes, u.result(role, wall))
	}
	return rep
}
