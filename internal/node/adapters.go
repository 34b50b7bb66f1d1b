package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/api"
	"github.com/relayd/relayd/internal/p2p"
	"github.com/relayd/relayd/internal/store"
)

// apiNode is the node as the REST API sees it.
type apiNode struct{ n *Node }

func (a apiNode) Address() common.Address { return a.n.id.Address() }
func (a apiNode) PeerID() peer.ID         { return a.n.id.PeerID() }
func (a apiNode) Version() string         { return Version }

func (a apiNode) Ping(ctx context.Context, id peer.ID) (time.Duration, error) {
	return a.n.host.Ping(ctx, id)
}

func (a apiNode) Peers() []api.PeerInfo {
	peers := a.n.host.Peers()
	out := make([]api.PeerInfo, 0, len(peers))
	for _, p := range peers {
		out = append(out, peerInfo(p))
	}
	return out
}

func peerInfo(p p2p.PeerInfo) api.PeerInfo {
	info := api.PeerInfo{
		PeerID:     p.ID.String(),
		MultiAddrs: make([]string, 0, len(p.Addrs)),
		Quality:    p.Quality,
		LatencyMs:  float64(p.Latency.Microseconds()) / 1000,
		Connected:  p.Connected,
		Heartbeats: api.Heartbeats{Sent: p.HeartbeatsSent, Success: p.HeartbeatsSucceeded},
	}
	for _, a := range p.Addrs {
		info.MultiAddrs = append(info.MultiAddrs, a.String())
	}
	if !p.LastSeen.IsZero() {
		info.LastSeen = p.LastSeen.UnixMilli()
	}
	return info
}

func (a apiNode) Aliases() (map[string]string, error) {
	list, err := a.n.db.Aliases()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(list)+1)
	for _, kv := range list {
		m[kv[0]] = kv[1]
	}
	return m, nil
}

func (a apiNode) SetAlias(alias string, id peer.ID) error { return a.n.db.SetAlias(alias, id.String()) }

func (a apiNode) DeleteAlias(alias string) error {
	err := a.n.db.DeleteAlias(alias)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %w", api.ErrAliasNotFound, err)
	}
	return err
}

func (a apiNode) Settings() (map[string]any, error) { return a.n.settings.get().asJSON(), nil }

func (a apiNode) UpdateSettings(values map[string]json.RawMessage) (map[string]any, error) {
	next, err := a.n.settings.update(values)
	var se settingError
	switch {
	case errors.As(err, &se) && errors.Is(err, errUnknownSetting):
		return nil, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidSetting, Msg: se.msg}
	case errors.As(err, &se):
		return nil, &api.Error{Status: http.StatusBadRequest, Code: api.CodeInvalidSettingValue, Msg: se.msg}
	case err != nil:
		return nil, err
	}
	return next.asJSON(), nil
}

func (a apiNode) Info(ctx context.Context) (api.Info, error) {
	n := a.n
	info := api.Info{Network: n.cfg.Network, ListeningAddresses: []string{}, AnnouncedAddresses: []string{}}
	for _, m := range n.host.Addrs() {
		info.ListeningAddresses = append(info.ListeningAddresses, m.String())
	}
	s := n.chain
	if s == nil {
		return info, nil
	}
	info.ChainID = s.client.ChainID()
	info.ChannelsContract = s.client.ChannelsAddress().Hex()
	info.TokenContract = s.client.TokenAddress().Hex()
	info.TokenSymbol = s.client.TokenSymbol()
	info.ClosurePeriod = uint64(s.client.ClosurePeriod().Seconds())
	info.IndexedBlock = s.indexer.Next()
	snap := s.graph.Snapshot()
	info.ChannelsIndexed = len(snap.Channels())
	info.PeersAnnounced = len(snap.Peers())
	if ann, ok := snap.Announced(n.id.Address()); ok {
		info.AnnouncedAddresses = append(info.AnnouncedAddresses, ann.Multiaddrs...)
	}
	return info, nil
}
