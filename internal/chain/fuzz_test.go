package chain

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/relayd/relayd/internal/channels"
	"github.com/relayd/relayd/internal/identity"
	"github.com/relayd/relayd/internal/store"
)

// FuzzDecodeRevert feeds arbitrary revert data (what a provider returns) to decodeRevert: it
// never panics, keeps the data, always matches ErrReverted, names a known custom error when it
// decoded one, and otherwise says the selector it did not know.
func FuzzDecodeRevert(f *testing.F) {
	for _, a := range []abi.ABI{channelsABI.GetABI(), tokenABI.GetABI()} {
		for _, e := range a.Errors {
			f.Add(append(e.ID.Bytes()[:4], make([]byte, 32*len(e.Inputs))...))
		}
	}
	str, _ := abi.NewType("string", "", nil)
	reason, err := abi.Arguments{{Type: str}}.Pack("not enough tokens")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(append(crypto.Keccak256([]byte("Error(string)"))[:4], reason...))
	f.Add(append(crypto.Keccak256([]byte("Panic(uint256)"))[:4], common.LeftPadBytes([]byte{0x11}, 32)...))
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		e := decodeRevert(data)
		// Reason is empty only for an empty revert string (Solidity's revert("")).
		if s, err := abi.UnpackRevert(data); e == nil || !bytes.Equal(e.Data, data) || e.Sent ||
			(e.Reason == "" && (err != nil || s != "")) {
			t.Fatalf("decodeRevert(%x) = %+v", data, e)
		}
		if !errors.Is(e, ErrReverted) {
			t.Fatalf("%v does not match ErrReverted", e)
		}
		if errors.Is(e, ErrInsufficientFunds) != strings.HasPrefix(e.Reason, "ERC20InsufficientBalance") {
			t.Fatalf("%v: ErrInsufficientFunds match disagrees with the reason", e)
		}
		switch {
		case len(data) < 4:
			if e.Reason != "unknown" || e.Decoded != nil {
				t.Fatalf("short data %x decoded as %+v", data, e)
			}
		case e.Decoded != nil:
			name, _, _ := strings.Cut(e.Reason, "{")
			if !knownError(name, data[:4]) {
				t.Fatalf("reason %q is not the custom error of selector %x", e.Reason, data[:4])
			}
		}
	})
}

// knownError reports whether name is a custom error of the channels or token contract with
// selector sel.
func knownError(name string, sel []byte) bool {
	for _, a := range []abi.ABI{channelsABI.GetABI(), tokenABI.GetABI()} {
		if e, ok := a.Errors[name]; ok && bytes.Equal(e.ID.Bytes()[:4], sel) {
			return true
		}
	}
	return false
}

// fuzzSource is a Source apply never calls.
type fuzzSource struct{ Source }

// fuzzStore is a StateStore that keeps the last commit.
type fuzzStore struct {
	chans []channels.Channel
	anns  []channels.Announcement
}

func (s *fuzzStore) LoadChainState() (store.ChainCursor, []channels.Channel, []channels.Announcement, error) {
	return store.ChainCursor{}, nil, nil, nil
}

func (s *fuzzStore) CommitChainRange(_ store.ChainCursor, chans []channels.Channel, anns []channels.Announcement, _ uint64) error {
	s.chans, s.anns = chans, anns
	return nil
}

func (s *fuzzStore) ChainJournal() ([]store.ChainCheckpoint, error) { return nil, nil }

func (s *fuzzStore) RewindChainState(store.ChainCheckpoint) (store.ChainRewind, error) {
	return store.ChainRewind{}, store.ErrNoCheckpoint
}

func (s *fuzzStore) ResetChainState() error { return nil }

// FuzzIndexerLog feeds one arbitrary log (topics and data, as a provider could return them)
// to the indexer's apply, which decodes ChannelUpdated and Announcement events: it never panics
// or fails, and what reaches the store, the graph and OnEvent is well formed: a channel has its
// id from the topics and a balance ≥ 0; an announcement has its account from the topics, a
// 33-byte compressed key that yields a PeerId, and multiaddrs that each start with '/'.
func FuzzIndexerLog(f *testing.F) {
	a := channelsABI.GetABI()
	key, err := crypto.ToECDSA(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		f.Fatal(err)
	}
	account := crypto.PubkeyToAddress(key.PublicKey)
	ann, err := a.Events["Announcement"].Inputs.NonIndexed().Pack(
		crypto.FromECDSAPub(&key.PublicKey)[1:], []byte("/ip4/127.0.0.1/tcp/9091"))
	if err != nil {
		f.Fatal(err)
	}
	upd, err := a.Events["ChannelUpdated"].Inputs.NonIndexed().Pack(
		big.NewInt(1e18), uint64(3), uint32(1), uint8(1), uint64(1700000000))
	if err != nil {
		f.Fatal(err)
	}
	// kind: the low two bits pick topic 0 (ChannelUpdated, Announcement, another event), the
	// next two how many of t1, t2, t3 follow it.
	f.Add(uint8(1|1<<2), account.Bytes(), []byte(nil), []byte(nil), ann)
	f.Add(uint8(1|1<<2), account.Bytes(), []byte(nil), []byte(nil), ann[:len(ann)-1])
	f.Add(uint8(0|3<<2), bytes.Repeat([]byte{1}, 32), account.Bytes(), common.Address{2}.Bytes(), upd)
	f.Add(uint8(0|3<<2), []byte{1}, []byte{2}, []byte{3}, upd[:64])
	f.Add(uint8(2), []byte{}, []byte{}, []byte{}, []byte{})

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, kind uint8, t1, t2, t3, data []byte) {
		st := &fuzzStore{}
		graph := channels.NewGraph()
		var events []Event
		ix, err := NewIndexer(IndexerConfig{Source: fuzzSource{}, Store: st, Graph: graph, ChainID: 1,
			Channels: common.Address{1}, Logger: quiet, OnEvent: func(e Event) { events = append(events, e) }})
		if err != nil {
			t.Fatal(err)
		}
		topics := []common.Hash{ix.topic[0], ix.topic[1], crypto.Keccak256Hash([]byte("Other()"))}[kind&3%3:][:1]
		for i, b := range [][]byte{t1, t2, t3} {
			if int(kind>>2)%4 > i {
				topics = append(topics, common.BytesToHash(b))
			}
		}
		log := types.Log{Address: common.Address{1}, Topics: topics, Data: data, BlockNumber: 5}
		if err := ix.apply([]types.Log{log}, store.ChainCursor{ChainID: 1, Next: 6}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		for _, e := range events {
			switch e.Kind {
			case ChannelEvent:
				c := e.Channel
				if c.ID != topics[1] || c.Balance == nil || c.Balance.Sign() < 0 {
					t.Fatalf("bad channel %+v from topics %x", c, topics)
				}
				if got, ok := graph.ByID(c.ID); !ok || !got.Equal(c) {
					t.Fatalf("channel %x not in the graph as decoded", c.ID)
				}
			case AnnouncementEvent:
				an := e.Announcement
				if an.Account != common.BytesToAddress(topics[1][:]) {
					t.Fatalf("account %s is not topic %x", an.Account, topics[1])
				}
				if _, err := identity.PeerIDFromPubKey(an.PublicKey); err != nil {
					t.Fatalf("announced key %x: %v", an.PublicKey, err)
				}
				for _, m := range an.Multiaddrs {
					if !strings.HasPrefix(m, "/") {
						t.Fatalf("multiaddr %q", m)
					}
				}
				if _, ok := graph.Announced(an.Account); !ok || len(st.anns) != 1 {
					t.Fatalf("announcement of %s not stored and applied", an.Account)
				}
			default:
				t.Fatalf("event of kind %d", e.Kind)
			}
		}
	})
}
