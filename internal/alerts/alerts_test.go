package alerts

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/token"
	"github.com/relayd/relayd/internal/wait"
)

// world is a fake node whose values tests set.
type world struct {
	mu        sync.Mutex
	now       time.Time
	headErr   error
	head      uint64
	next      uint64
	native    *big.Int
	out, in   []channels.Channel
	known     []peers.Info
	settings  settings.Values
	addresses map[peer.ID]common.Address
}

func newWorld() *world {
	s := settings.Defaults()
	s.AlertHoldSeconds = 60
	return &world{now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), head: 100, next: 101, native: token.One.Big(), settings: s,
		addresses: map[peer.ID]common.Address{}}
}

func (w *world) set(f func(w *world)) { w.mu.Lock(); f(w); w.mu.Unlock() }

func (w *world) alerts(t *testing.T) *Alerts {
	t.Helper()
	a, err := New(Config{Now: func() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.now }, Settings: func() settings.Values {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.settings
	}, Sources: Sources{
		Head:    func(context.Context) (uint64, error) { w.mu.Lock(); defer w.mu.Unlock(); return w.head, w.headErr },
		Indexed: func() uint64 { w.mu.Lock(); defer w.mu.Unlock(); return w.next },
		Balances: func(context.Context) (*big.Int, *big.Int, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.headErr != nil {
				return nil, nil, w.headErr
			}
			return w.native, big.NewInt(0), nil
		},
		Channels: func(bool) ([]channels.Channel, []channels.Channel) {
			w.mu.Lock()
			defer w.mu.Unlock()
			return w.in, w.out
		},
		Peers: func() []peers.Info { w.mu.Lock(); defer w.mu.Unlock(); return w.known },
		AddressOf: func(id peer.ID) (common.Address, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			a, ok := w.addresses[id]
			if !ok {
				return common.Address{}, errors.New("unknown")
			}
			return a, nil
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// step moves the clock by d and evaluates.
func (w *world) step(t *testing.T, a *Alerts, d time.Duration) {
	t.Helper()
	w.set(func(w *world) { w.now = w.now.Add(d) })
	a.Evaluate(t.Context())
}

func raised(a *Alerts, id ID) (Alert, bool) {
	for _, al := range a.Alerts() {
		if al.ID == id {
			return al, true
		}
	}
	return Alert{}, false
}

func tokens(milli int64) *big.Int {
	return new(big.Int).Div(new(big.Int).Mul(big.NewInt(milli), token.One.Big()), big.NewInt(1000))
}

// TestEachAlertRaisedAndCleared: each condition raises its alert once it held for the hold time
// (since: when it began), not before; the alert stays between the raise and clear thresholds
// (hysteresis) and clears once its opposite held as long.
func TestEachAlertRaisedAndCleared(t *testing.T) {
	peerA, peerB := peer.ID("peer-a"), peer.ID("peer-b")
	addrA, addrB := common.Address{0xa}, common.Address{0xb}
	for _, tc := range []struct {
		id       ID
		severity Severity
		setup    func(w *world) // before: nothing raised
		raise    func(w *world)
		between  func(w *world) // neither raises nor clears; nil: none
		clear    func(w *world)
		subject  string
	}{
		{id: NativeBalanceLow, severity: Warning,
			raise:   func(w *world) { w.native = tokens(5) },  // 0.005 < 0.01
			between: func(w *world) { w.native = tokens(10) }, // at the threshold, below 0.011
			clear:   func(w *world) { w.native = tokens(11) }},
		{id: ChannelDepleted, severity: Warning, subject: addrA.Hex(),
			setup: func(w *world) {
				w.addresses[peerA], w.known = addrA, []peers.Info{{ID: peerA, Quality: 1}}
				w.out = []channels.Channel{{Destination: addrA, Status: channels.Open, Balance: tokens(5000)}}
			},
			raise:   func(w *world) { w.out[0].Balance = tokens(500) },
			between: func(w *world) { w.out[0].Balance = tokens(1050) },
			clear:   func(w *world) { w.out[0].Balance = tokens(1100) }},
		{id: IndexerBehind, severity: Critical,
			raise:   func(w *world) { w.head = 130 }, // 30 behind > 20
			between: func(w *world) { w.next = 115 }, // 16 behind: within 20, not within 10
			clear:   func(w *world) { w.next = 125 }},
		{id: ProviderDown, severity: Critical,
			raise: func(w *world) { w.headErr = errors.New("dial tcp: https://provider.example/secret-key: refused") },
			clear: func(w *world) { w.headErr = nil }},
		{id: ChannelPeersUnreachable, severity: Warning, subject: peerB.String(),
			setup: func(w *world) {
				w.addresses[peerA], w.addresses[peerB] = addrA, addrB
				w.out = []channels.Channel{{Destination: addrA, Status: channels.Open, Balance: tokens(5000)}}
				w.in = []channels.Channel{{Source: addrB, Status: channels.Open, Balance: tokens(5000)}}
				w.known = []peers.Info{{ID: peerA, Quality: 1}, {ID: peerB, Quality: 1}}
			},
			raise: func(w *world) { w.known[1].Down = true },
			clear: func(w *world) { w.known[1].Down, w.known[1].Quality = false, 0.9 }},
	} {
		t.Run(string(tc.id), func(t *testing.T) {
			w := newWorld()
			if tc.setup != nil {
				w.set(tc.setup)
			}
			a := w.alerts(t)
			w.step(t, a, 0)
			if got := a.Alerts(); len(got) != 0 {
				t.Fatalf("raised before: %+v", got)
			}
			w.set(tc.raise)
			began := w.now.Add(15 * time.Second)
			w.step(t, a, 15*time.Second)
			w.step(t, a, 30*time.Second)
			if _, ok := raised(a, tc.id); ok {
				t.Fatal("raised before the hold time")
			}
			w.step(t, a, 30*time.Second)
			al, ok := raised(a, tc.id)
			if !ok || len(a.Alerts()) != 1 {
				t.Fatalf("not raised after the hold time: %+v", a.Alerts())
			}
			if al.Severity != tc.severity || !al.Since.Equal(began) || al.Detail == "" {
				t.Fatalf("alert %+v, want severity %s since %v", al, tc.severity, began)
			}
			if strings.Contains(al.Detail, "provider.example") || strings.Contains(al.Detail, "secret") {
				t.Fatalf("detail quotes the provider: %q", al.Detail)
			}
			if tc.subject != "" && (len(al.Subjects) != 1 || al.Subjects[0] != tc.subject) {
				t.Fatalf("subjects %q, want %q", al.Subjects, tc.subject)
			}
			if tc.between != nil {
				w.set(tc.between)
				w.step(t, a, 10*time.Minute)
				w.step(t, a, 10*time.Minute)
				if _, ok := raised(a, tc.id); !ok {
					t.Fatal("cleared between the raise and clear thresholds")
				}
			}
			w.set(tc.clear)
			w.step(t, a, 15*time.Second)
			w.step(t, a, 45*time.Second)
			if _, ok := raised(a, tc.id); !ok {
				t.Fatal("cleared before the hold time")
			}
			w.step(t, a, 15*time.Second)
			if got := a.Alerts(); len(got) != 0 {
				t.Fatalf("not cleared after the hold time: %+v", got)
			}
		})
	}
}

// TestNoFlapping: a condition that comes and goes within the hold time never raises.
func TestNoFlapping(t *testing.T) {
	w := newWorld()
	a := w.alerts(t)
	for i := range 20 {
		w.set(func(w *world) {
			if i%2 == 0 {
				w.native = tokens(1)
			} else {
				w.native = tokens(20)
			}
		})
		w.step(t, a, 30*time.Second)
		if got := a.Alerts(); len(got) != 0 {
			t.Fatalf("step %d: raised %+v", i, got)
		}
	}
}

// TestReadiness: Checks is not ready while a critical alert is raised, ready with warnings only.
func TestReadiness(t *testing.T) {
	w := newWorld()
	w.settings.AlertHoldSeconds = 0
	a := w.alerts(t)
	w.set(func(w *world) { w.native = tokens(1) })
	w.step(t, a, time.Second)
	if c := a.Checks(t.Context()); len(c) != 1 || c[0].Name != "alerts" || !c[0].Ready || !strings.Contains(c[0].Detail, "nativeBalanceLow") {
		t.Fatalf("with a warning: %+v", c)
	}
	w.set(func(w *world) { w.headErr = errors.New("down") })
	w.step(t, a, time.Second)
	if c := a.Checks(t.Context()); c[0].Ready || !strings.Contains(c[0].Detail, "providerDown") {
		t.Fatalf("with the provider down: %+v", c)
	}
	if got := a.Alerts(); len(got) != 2 || got[0].ID != ProviderDown || got[1].ID != NativeBalanceLow {
		t.Fatalf("alerts %+v, want the critical one first", got)
	}
	w.set(func(w *world) { w.headErr = nil })
	w.step(t, a, time.Second)
	if c := a.Checks(t.Context()); !c[0].Ready {
		t.Fatalf("after the provider came back: %+v", c)
	}
}

// TestNoSources: a node without a chain raises nothing; Run evaluates at each tick until its
// context ends.
func TestNoSources(t *testing.T) {
	ticks := make(chan time.Time)
	evaluated := make(chan struct{}, 10)
	a, err := New(Config{Settings: func() settings.Values { evaluated <- struct{}{}; return settings.Defaults() }, Ticks: ticks})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- a.Run(ctx) }()
	ticks <- time.Now()
	ticks <- time.Now()
	wait.For(t, func() bool { return len(evaluated) >= 3 }, 5*time.Second, "three evaluations")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := a.Alerts(); len(got) != 0 {
		t.Fatalf("%+v", got)
	}
	if c := a.Checks(t.Context()); !c[0].Ready {
		t.Fatalf("%+v", c)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without Settings succeeded")
	}
}

// TestDepletedCountsWhatTheChannelCanPay: a channel whose balance on chain is above the
// threshold is depleted once the tickets signed on it and not yet redeemed leave less than the
// threshold (Available), and clears once what it can pay is 10 % above it again.
func TestDepletedCountsWhatTheChannelCanPay(t *testing.T) {
	w := newWorld()
	w.settings.AlertHoldSeconds = 0
	addr := common.Address{0xa}
	w.out = []channels.Channel{{Destination: addr, Status: channels.Open, Balance: tokens(1200)}}
	var avail uint256.Int
	avail.SetFromBig(tokens(1200))
	a := w.alerts(t)
	a.cfg.Sources.Available = func(to common.Address) (uint256.Int, bool) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return avail, to == addr
	}
	w.step(t, a, time.Second)
	if _, ok := raised(a, ChannelDepleted); ok {
		t.Fatal("raised while the channel can pay 1.2 tokens")
	}
	w.set(func(*world) { avail.SetFromBig(tokens(900)) }) // 0.3 tokens of tickets outstanding
	w.step(t, a, time.Second)
	al, ok := raised(a, ChannelDepleted)
	if !ok || len(al.Subjects) != 1 || al.Subjects[0] != addr.Hex() || !strings.Contains(al.Detail, "can pay less than 1 tokens") {
		t.Fatalf("not raised for a channel of 1.2 tokens on chain that can pay 0.9: %+v", al)
	}
	w.set(func(*world) { avail.SetFromBig(tokens(1150)) })
	w.step(t, a, time.Second)
	if _, ok := raised(a, ChannelDepleted); ok {
		t.Fatal("not cleared once the channel can pay 1.15 tokens")
	}
}

// TestSubjectsBounded: an alert names at most MaxSubjects channels.
func TestSubjectsBounded(t *testing.T) {
	w := newWorld()
	w.settings.AlertHoldSeconds = 0
	for i := range 40 {
		w.out = append(w.out, channels.Channel{Destination: common.Address{byte(i)}, Status: channels.Open, Balance: big.NewInt(1)})
	}
	a := w.alerts(t)
	w.step(t, a, time.Second)
	al, ok := raised(a, ChannelDepleted)
	if !ok || len(al.Subjects) != MaxSubjects || !strings.HasPrefix(al.Detail, "40 ") {
		t.Fatalf("%+v", al)
	}
}
