package api

import (
	"context"
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/history"
	"github.com/relayd/relayd/internal/peers"
	"github.com/relayd/relayd/internal/token"
)

// memHistory is a history.Store in memory.
type memHistory struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memHistory) PutHistory(r map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	maps.Copy(s.m, r)
	return nil
}

func (s *memHistory) LoadHistory() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.m), nil
}

// historyStart is the fake history's first sample.
var historyStart = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// newFakeHistory is a history of two samples 15 s apart: balances of 2 native and 40 tokens (no
// tickets source: those series are null), one peer with traffic.
func newFakeHistory() *history.History {
	now := historyStart
	var traffic uint64
	h, err := history.New(history.Config{Store: &memHistory{}, Now: func() time.Time { return now }, Sources: history.Sources{
		Balances: func(context.Context) (*big.Int, *big.Int, error) {
			return token.Tokens(2).Big(), token.Tokens(40).Big(), nil
		},
		Peers: func() []peers.Info { return []peers.Info{{ID: peer.ID("fake-peer"), Quality: 0.5}} },
		Traffic: func() map[peer.ID]history.Traffic {
			traffic += 100
			return map[peer.ID]history.Traffic{"fake-peer": {In: traffic, Out: traffic}}
		},
	}})
	if err != nil {
		panic(err)
	}
	for range 2 {
		if err := h.Sample(context.Background()); err != nil {
			panic(err)
		}
		now = now.Add(15 * time.Second)
	}
	now = now.Add(-15 * time.Second)
	return h
}

// TestHistoryShape: GET /node/history answers the resolution's points as columns of one length,
// null for a series the node has not, and the peers by PeerId.
func TestHistoryShape(t *testing.T) {
	srv, _ := newTestServer(t, false)
	for _, tc := range []struct {
		query       string
		res         string
		step, span  int64
		points      int
		samplesLast int
	}{
		{"", "hour", 15, 3600, 2, 1},
		{"?resolution=hour", "hour", 15, 3600, 2, 1},
		{"?resolution=day", "day", 300, 86400, 1, 2},
		{"?resolution=week", "week", 3600, 604800, 1, 2},
	} {
		status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/history"+tc.query, auth)
		var got struct {
			Resolution  string                `json:"resolution"`
			StepSeconds int64                 `json:"stepSeconds"`
			SpanSeconds int64                 `json:"spanSeconds"`
			Times       []string              `json:"times"`
			Samples     []int                 `json:"samples"`
			Series      map[string][]*float64 `json:"series"`
			Peers       []map[string]any      `json:"peers"`
			Other       map[string][]*float64 `json:"other"`
		}
		if status != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s: %d %s", tc.query, status, body)
		}
		if got.Resolution != tc.res || got.StepSeconds != tc.step || got.SpanSeconds != tc.span || len(got.Times) != tc.points ||
			got.Times[0] != "2026-11-27T10:00:00.000Z" || got.Samples[len(got.Samples)-1] != tc.samplesLast {
			t.Fatalf("%s: %s", tc.query, body)
		}
		if len(got.Series) != len(history.AllSeries()) {
			t.Fatalf("%s: %d series: %s", tc.query, len(got.Series), body)
		}
		for name, vs := range got.Series {
			if len(vs) != tc.points {
				t.Fatalf("%s: %s has %d values, want %d", tc.query, name, len(vs), tc.points)
			}
		}
		if v := got.Series["tokenBalance"]; v[0] == nil || *v[0] != 40 {
			t.Fatalf("%s: tokenBalance %s", tc.query, body)
		}
		if v := got.Series["ticketsWon"]; v[0] != nil {
			t.Fatalf("%s: ticketsWon without a source: %s", tc.query, body)
		}
		if len(got.Peers) != 1 || got.Peers[0]["peerId"] != peer.ID("fake-peer").String() || len(got.Other["bytesIn"]) != tc.points {
			t.Fatalf("%s: peers %s", tc.query, body)
		}
	}
}

// TestHistoryBadInput: a resolution that is not hour, day or week, or given twice, is 400 in the
// error envelope.
func TestHistoryBadInput(t *testing.T) {
	srv, _ := newTestServer(t, false)
	for _, q := range []string{"?resolution=month", "?resolution=", "?resolution=HOUR", "?resolution=day&resolution=week"} {
		status, _, body := do(t, http.MethodGet, srv.URL+Prefix+"/node/history"+q, auth)
		var e ErrorBody
		if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Status != CodeInvalidInput || e.Error == "" {
			t.Errorf("%s: %d %s", q, status, body)
		}
	}
}
