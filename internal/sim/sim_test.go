package sim

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/relayd/relayd/internal/path"
	"github.com/relayd/relayd/internal/token"
)

// small is a 30-node network with a short run: fast enough for every test.
func small(t *testing.T, mutate func(*Config)) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Duration = 30 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	return cfg
}

func run(t *testing.T, cfg Config) Report {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSameSeedSameReport(t *testing.T) {
	cfg := small(t, func(c *Config) { c.Churn = 0.1; c.ChurnInterval = 5 * time.Second })
	a, b := run(t, cfg), run(t, cfg)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different reports:\n%+v\n%+v", a, b)
	}
	cfg.Seed++
	if c := run(t, cfg); reflect.DeepEqual(a, c) {
		t.Fatalf("another seed gave the same report: %+v", c)
	}
}

func TestWithoutChurnEverythingArrives(t *testing.T) {
	r := run(t, small(t, nil))
	if r.Messages < 2500 || r.Accepted != r.Messages || r.PathFound != 1 {
		t.Fatalf("%d messages, %d accepted, path found %.4f: want about 3000, all accepted", r.Messages, r.Accepted, r.PathFound)
	}
	if r.Delivery < 0.999 || r.Kills != 0 {
		t.Fatalf("delivery %.4f with %d kills, want at least 0.999 with none", r.Delivery, r.Kills)
	}
	if r.ChannelsIn.Min < 1 || r.ZeroIncoming != 0 {
		t.Fatalf("incoming channels %+v, %.2f of the nodes with none: every node needs one", r.ChannelsIn, r.ZeroIncoming)
	}
	if r.ChannelsOut != (Spread{4, 4, 4}) {
		t.Fatalf("outgoing channels %+v, want maxChannels (4) everywhere", r.ChannelsOut)
	}
	if r.MeanHops < 3 || r.MeanHops > 4 {
		t.Fatalf("mean hops %.2f, want between 3 (2 relayers) and 4 (3 relayers)", r.MeanHops)
	}
}

func TestChurnLosesSomeMessagesButFew(t *testing.T) {
	calm := run(t, small(t, nil))
	r := run(t, small(t, func(c *Config) { c.Churn = 0.1; c.ChurnInterval = 5 * time.Second }))
	if r.Kills == 0 || r.Lost == 0 {
		t.Fatalf("%d kills, %d lost: churn did nothing", r.Kills, r.Lost)
	}
	if r.Delivery >= calm.Delivery || r.Delivery <= 0.9 {
		t.Fatalf("delivery %.4f with churn, %.4f without: want lower, but above 0.9", r.Delivery, calm.Delivery)
	}
}

func TestLatencyFollowsLinksAndHops(t *testing.T) {
	const lo, hi, mix = 40 * time.Millisecond, 60 * time.Millisecond, 10 * time.Millisecond
	r := run(t, small(t, func(c *Config) { c.LatencyMin, c.LatencyMax, c.MixDelayMax = lo, hi, mix }))
	if r.LatencyP50 < 3*lo || r.LatencyP99 > 4*hi+3*mix {
		t.Fatalf("p50 %v, p99 %v: want within [3×%v, 4×%v + 3×%v]", r.LatencyP50, r.LatencyP99, lo, hi, mix)
	}
	if !(r.LatencyP50 <= r.LatencyP90 && r.LatencyP90 <= r.LatencyP99) {
		t.Fatalf("percentiles out of order: %v %v %v", r.LatencyP50, r.LatencyP90, r.LatencyP99)
	}
}

// warm returns a network at the end of its warmup: channels open, no traffic yet.
func warm(t *testing.T) *Sim {
	t.Helper()
	s, err := New(small(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	s.runUntil(s.cfg.Warmup - time.Millisecond)
	return s
}

// firstHops counts the first relayers of n paths from 0 to recipient to.
func firstHops(t *testing.T, s *Sim, to, n int) map[int]int {
	t.Helper()
	seen := map[int]int{}
	for range n {
		hops, err := s.pickPath(0, to)
		if err != nil {
			t.Fatal(err)
		}
		seen[hops[0]]++
	}
	return seen
}

func TestSenderAvoidsAFirstHopItFoundDown(t *testing.T) {
	s := warm(t)
	// A recipient that node 0 reaches over several first hops (which one depends on the graph).
	to, seen := 0, map[int]int{}
	for r := s.cfg.Senders; r < s.cfg.Senders+s.cfg.Recipients && len(seen) < 2; r++ {
		to, seen = r, firstHops(t, s, r, 200)
	}
	if len(seen) < 2 {
		t.Fatalf("first hops %v: want several to choose from", seen)
	}
	var x int
	for h := range seen {
		x = max(x, h) // any; the largest, to be deterministic
	}
	s.nodes[x].up = false
	for s.st.refusedFirstHop == 0 {
		if s.st.messages > 1000 {
			t.Fatalf("no message of 1000 went to first hop %d (%v)", x, seen)
		}
		s.send(0, to)
	}
	if !s.nodes[0].down[x] {
		t.Fatalf("sender did not mark %d down", x)
	}
	if after := firstHops(t, s, to, 200); after[x] != 0 {
		t.Fatalf("first hop %d taken %d times out of 200 while marked down", x, after[x])
	}
	refused := s.st.refusedFirstHop
	for range 100 {
		s.send(0, to)
	}
	if s.st.refusedFirstHop != refused {
		t.Fatalf("%d more messages refused at a first hop marked down", s.st.refusedFirstHop-refused)
	}
	// Back up: the sender's next successful heartbeat clears the mark.
	s.nodes[x].up = true
	s.heartbeat(0)
	if after := firstHops(t, s, to, 200); after[x] == 0 {
		t.Fatalf("first hop %d back up and heartbeated, never taken again: %v", x, after)
	}
}

func TestHeartbeatQualityFollowsP2P(t *testing.T) {
	s := warm(t)
	step := func() { // one heartbeat interval: exactly one heartbeat of node 0
		end := s.now + s.cfg.HeartbeatInterval
		s.runUntil(end)
		s.now = end
	}
	q := s.quality(0, 20)
	s.nodes[20].up = false
	s.nodes[20].history = append(s.nodes[20].history, transition{at: s.now, up: false})
	step()
	if got, want := s.quality(0, 20), q*0.75; math.Abs(got-want) > 1e-12 {
		t.Fatalf("quality after a failed ping %v, want %v", got, want)
	}
	s.restart(20)
	step()
	if got, want := s.quality(0, 20), q*0.75*0.75+0.25; math.Abs(got-want) > 1e-12 {
		t.Fatalf("quality after a successful ping %v, want %v", got, want)
	}
}

// TestQualityIsThePingByPingRule: under churn, the quality computed when asked equals the
// p2p rule applied ping by ping at each of the node's heartbeats (0.5 at its start, then a
// quarter of the way to 1 or 0 by whether the peer was up).
func TestQualityIsThePingByPingRule(t *testing.T) {
	s, err := New(small(t, func(c *Config) { c.Churn = 0.3; c.ChurnInterval = 3 * time.Second; c.ChurnDowntime = 4 * time.Second }))
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	s.runUntil(s.cfg.Warmup + 20*time.Second)
	i := 0 // a sender: never killed, so its quality runs from its start
	n := s.nodes[i]
	downs := 0
	for j := 1; j < len(s.nodes); j++ {
		m := s.nodes[j]
		downs += len(m.history)
		upAt := func(t time.Duration) bool {
			up := true
			for _, tr := range m.history {
				if tr.at <= t {
					up = tr.up
				}
			}
			return up
		}
		q := initialQuality
		for tick := n.hbFirst; tick <= s.now; tick += s.cfg.HeartbeatInterval {
			if tick <= m.announcedAt {
				continue
			}
			if upAt(tick) {
				q = q*(1-qualityWeight) + qualityWeight
			} else {
				q *= 1 - qualityWeight
			}
		}
		if got := s.quality(i, j); math.Abs(got-q) > 1e-9 {
			t.Errorf("quality of %d: %v, ping by ping %v", j, got, q)
		}
	}
	if downs == 0 {
		t.Fatal("no node went down: the churn did not run")
	}
}

func TestStrategyWaitsForTheAnnouncedPeersToSettle(t *testing.T) {
	s, err := New(small(t, func(c *Config) { c.JoinWindow = 10 * time.Second }))
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	// Until the last announcement is mined (at most JoinWindow + ChainDelay) the peers keep
	// changing; a channel opened before that was decided on peers seen twice in a row only.
	s.runUntil(5 * time.Second)
	opened := 0
	for _, n := range s.nodes {
		opened += len(n.out)
	}
	if opened != 0 {
		t.Fatalf("%d channels opened while the nodes were still announcing", opened)
	}
	s.runUntil(s.cfg.Warmup)
	for i, n := range s.nodes {
		if len(n.out) != 4 {
			t.Fatalf("node %d has %d channels at the end of the warmup, want 4", i, len(n.out))
		}
	}
}

func TestLatencyIsPerPairAndSymmetric(t *testing.T) {
	s, err := New(small(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	var ds []time.Duration
	for i := range 10 {
		for j := i + 1; j < 10; j++ {
			d := s.latency(i, j)
			if d != s.latency(j, i) || d < s.cfg.LatencyMin || d > s.cfg.LatencyMax {
				t.Fatalf("latency %d-%d %v (back %v) outside [%v, %v] or asymmetric", i, j, d, s.latency(j, i), s.cfg.LatencyMin, s.cfg.LatencyMax)
			}
			ds = append(ds, d)
		}
	}
	slices.Sort(ds)
	if ds[len(ds)-1]-ds[0] < (s.cfg.LatencyMax-s.cfg.LatencyMin)/2 {
		t.Fatalf("45 pair latencies within %v: not drawn over the range", ds[len(ds)-1]-ds[0])
	}
}

func TestBadConfig(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"too few nodes":   func(c *Config) { c.Nodes = 9 },
		"fewer than four": func(c *Config) { c.Nodes, c.Senders, c.Recipients = 3, 1, 1 },
		"no senders":      func(c *Config) { c.Senders = 0 },
		"zero rate":       func(c *Config) { c.Rate = 0 },
		"no duration":     func(c *Config) { c.Duration = 0 },
		"latency range":   func(c *Config) { c.LatencyMin, c.LatencyMax = time.Second, time.Millisecond },
		"churn above one": func(c *Config) { c.Churn = 1.5 },
		"churn interval":  func(c *Config) { c.Churn, c.ChurnInterval = 0.1, 0 },
		"no funding":      func(c *Config) { c.ChannelFunding = big.NewInt(0) },
		"negative mixing": func(c *Config) { c.MixDelayMax = -1 },
		"negative mean":   func(c *Config) { c.MixDelayMean = -1 },
		"min above max":   func(c *Config) { c.MixDelayMin, c.MixDelayMax = 30*time.Millisecond, 20*time.Millisecond },
		"processing":      func(c *Config) { c.ProcessingMin, c.ProcessingMax = 2*time.Millisecond, time.Millisecond },
		"negative cover":  func(c *Config) { c.CoverRate = -1 },
		"cover NaN":       func(c *Config) { c.CoverRate = math.NaN() },
		"maxScored":       func(c *Config) { c.MaxScored = -1 },
		"overlap > epoch": func(c *Config) { c.Layers, c.LayerWidth, c.Epoch, c.EpochOverlap = 3, 3, time.Second, 2*time.Second },
		"negative epoch":  func(c *Config) { c.Layers, c.LayerWidth, c.Epoch = 3, 3, -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			mutate(&cfg)
			if _, err := New(cfg); !errors.Is(err, ErrBadConfig) {
				t.Fatalf("New: %v, want ErrBadConfig", err)
			}
		})
	}
}

// wholeGraph is from's view of the whole channel graph, as pickPath built it before it looked
// only at the part Select can reach (graph), with the loop's copy of the sender.
func wholeGraph(s *Sim, from, to int) (*path.Graph, common.Address) {
	self := s.nodes[from]
	g := &path.Graph{}
	for _, j := range s.announced {
		q := s.quality(from, j)
		if self.down[j] {
			q = 0
		}
		if j == from {
			q = 1
		}
		g.Nodes = append(g.Nodes, path.Node{Address: s.nodes[j].addr, Quality: q})
	}
	for _, c := range s.chans {
		if c.state == opening || c.state == gone {
			continue
		}
		g.Edges = append(g.Edges, path.Edge{Source: s.nodes[c.src].addr, Destination: s.nodes[c.dst].addr,
			Balance: c.balance, Open: c.state == open || c.state == closingTx})
	}
	dst := s.nodes[to].addr
	if to == from {
		dst = loopAddr
		g.Nodes = append(g.Nodes, path.Node{Address: loopAddr, Quality: 1})
		for _, e := range g.Edges {
			if e.Destination == self.addr {
				e.Destination = loopAddr
				g.Edges = append(g.Edges, e)
			}
		}
	}
	return g, dst
}

// TestPathsOnThePartSelectReachesAreTheSame: on a network mid-run (channels closing and
// reopening, nodes marked down, loops too), Select makes the same choice, with the same
// draws, on graph's part as on the whole graph.
func TestPathsOnThePartSelectReachesAreTheSame(t *testing.T) {
	cfg := small(t, func(c *Config) {
		c.Nodes, c.MaxChannels = 120, 3
		c.Churn, c.ChurnInterval = 0.1, 5*time.Second
		c.ChannelFunding = token.Units(500_000_000_000_000_000).Big() // depleted and replaced as they go
	})
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.start()
	errs, found, compared := 0, 0, 0
	for step := range 6 {
		s.runUntil(cfg.Warmup + time.Duration(step)*5*time.Second)
		for from := range 40 {
			for _, to := range []int{from, (from + 7) % cfg.Nodes, (from*13 + 5) % cfg.Nodes, 119 - from} {
				for relayers := path.MinRelayers; relayers <= path.MaxRelayers; relayers++ {
					seed := uint64(step*1000 + from*10 + relayers)
					part, dst := s.graph(from, to)
					whole, wdst := wholeGraph(s, from, to)
					a, errA := path.Select(rand.New(rand.NewPCG(seed, 1)), part, s.nodes[from].addr, dst, relayers, amount(1))
					b, errB := path.Select(rand.New(rand.NewPCG(seed, 1)), whole, s.nodes[from].addr, wdst, relayers, amount(1))
					if dst != wdst || !reflect.DeepEqual(a, b) || fmt.Sprint(errA) != fmt.Sprint(errB) {
						t.Fatalf("step %d, %d → %d over %d: part %v %v, whole %v %v", step, from, to, relayers, a, errA, b, errB)
					}
					compared++
					if errA != nil {
						errs++
					} else {
						found++
					}
				}
			}
		}
	}
	if found == 0 || errs == 0 || s.st.kills == 0 {
		t.Fatalf("%d of %d compared found a path, %d kills: want both outcomes, under churn", found, compared, s.st.kills)
	}
}

// TestRelayersSetting: with Relayers 3 the paths take three relayers where they exist, as the
// node's relayers setting makes them; by default two.
func TestRelayersSetting(t *testing.T) {
	two := run(t, small(t, nil))
	three := run(t, small(t, func(c *Config) { c.Relayers = 3 }))
	if two.ThreeRelayers > 0.5 || three.ThreeRelayers < 0.9 {
		t.Fatalf("share of 3-relayer paths: %.3f by default, %.3f with Relayers 3; want few and nearly all", two.ThreeRelayers, three.ThreeRelayers)
	}
	if three.Delivery < 0.999 {
		t.Fatalf("delivery %.4f with 3 relayers", three.Delivery)
	}
	if _, err := New(small(t, func(c *Config) { c.Relayers = 4 })); !errors.Is(err, ErrBadConfig) {
		t.Fatalf("Relayers 4: %v", err)
	}
}
