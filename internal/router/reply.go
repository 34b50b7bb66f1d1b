package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/relayd/relayd/internal/packet"
	"github.com/relayd/relayd/internal/relay"
)

// Framer is the part of the relay pipeline that carries framed messages and reply blocks
// (docs/PROTOCOL.md §3.9, §8); *relay.Relay implements it.
type Framer interface {
	SendMessage(ctx context.Context, hops []peer.ID, msg packet.Message) (relay.Sent, error)
	NewReplyBlock(ctx context.Context, hops []peer.ID) ([]byte, error)
	NewVolatileReplyBlock(ctx context.Context, hops []peer.ID) ([]byte, error)
	SendReply(ctx context.Context, block []byte, msg packet.Message) (relay.Sent, error)
}

// SendFrame sends one framed text (a fragment, an acknowledgement block's part) to recipient
// over a path the router picks, a new one per call, in its slot of the constant-rate stream. On
// the wire and to every relayer it is a message like any other.
func (r *Router) SendFrame(ctx context.Context, recipient peer.ID, text []byte) error {
	f, err := r.framer()
	if err != nil {
		return err
	}
	if recipient == r.cfg.Directory.Self() {
		return fmt.Errorf("%w: the recipient is this node", ErrSelf)
	}
	to, err := r.cfg.Directory.AddressOf(recipient)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadRoute, err)
	}
	hops, err := r.pathTo(to)
	if err != nil {
		return err
	}
	return r.pace(ctx, func(ctx context.Context) error {
		_, err := f.SendMessage(ctx, hops, packet.Message{Text: text, Framed: true})
		return err
	})
}

// NewReplyBlock builds a reply block with which from can send one packet back to this node
// without learning who it is: the return path is drawn like a forward path (as many relayers as
// the relayers setting says, else the other count), from from's channels over the graph to this
// node.
func (r *Router) NewReplyBlock(ctx context.Context, from peer.ID) ([]byte, error) {
	f, err := r.framer()
	if err != nil {
		return nil, err
	}
	return r.newReplyBlock(ctx, from, f.NewReplyBlock)
}

// NewSessionReplyBlock is NewReplyBlock for a session's answers (docs/SESSIONS.md): its keys
// are kept in memory only, as a session does not outlive the process. It also returns the
// block's relayers, so that the session can tell a block one of them made useless (Down).
func (r *Router) NewSessionReplyBlock(ctx context.Context, from peer.ID) ([]byte, []peer.ID, error) {
	f, err := r.framer()
	if err != nil {
		return nil, nil, err
	}
	var relayers []peer.ID
	block, err := r.newReplyBlock(ctx, from, func(ctx context.Context, hops []peer.ID) ([]byte, error) {
		relayers = hops
		return f.NewVolatileReplyBlock(ctx, hops)
	})
	return block, relayers, err
}

// Down reports whether sending to the peer failed since its last heartbeat (peers.Info.Down).
func (r *Router) Down(id peer.ID) bool {
	version := r.cfg.Transport.PeersVersion() // before Peers: a change in between rebuilds next time
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down == nil || r.downVersion != version {
		r.down, r.downVersion = map[peer.ID]bool{}, version
		for _, p := range r.cfg.Transport.Peers() {
			if p.Down {
				r.down[p.ID] = true
			}
		}
	}
	return r.down[id]
}

func (r *Router) newReplyBlock(ctx context.Context, from peer.ID, build func(context.Context, []peer.ID) ([]byte, error)) ([]byte, error) {
	if r.cfg.Graph == nil {
		return nil, ErrNoChain
	}
	src, err := r.cfg.Directory.AddressOf(from)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRoute, err)
	}
	r.mu.Lock()
	nodes, err := r.choose(src, r.self)
	r.mu.Unlock()
	if err != nil {
		return nil, classify(err)
	}
	hops := make([]peer.ID, 0, len(nodes)-1)
	for _, nd := range nodes[:len(nodes)-1] { // the relayers; the last node is this one
		hops = append(hops, nd.Peer)
	}
	block, err := build(ctx, hops)
	return block, classify(err)
}

// SendReply sends one framed text on a reply block another node made, in its slot of the
// constant-rate stream.
func (r *Router) SendReply(ctx context.Context, block []byte, text []byte) error {
	f, err := r.framer()
	if err != nil {
		return err
	}
	return r.pace(ctx, func(ctx context.Context) error {
		_, err := f.SendReply(ctx, block, packet.Message{Text: text, Framed: true})
		return err
	})
}

// framer is the Sender as a Framer.
func (r *Router) framer() (Framer, error) {
	f, ok := r.cfg.Sender.(Framer)
	if !ok {
		return nil, errors.New("router: the relay does not carry framed messages")
	}
	return f, nil
}

// pace runs send in the stream's slot when there is a stream, and classifies its error.
func (r *Router) pace(ctx context.Context, send func(context.Context) error) error {
	var err error
	if r.cfg.Pace != nil {
		err = r.cfg.Pace(ctx, send)
	} else {
		err = send(ctx)
	}
	return classify(err)
}
