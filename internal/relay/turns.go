package relay

import "sync"

// The relay's workers take any packet from one shared queue (fair between links: fairqueue.go),
// so that one busy link keeps every core busy, but tickets must keep their order on each link: a previous hop's tickets are
// accepted only in increasing index (the ledger refuses an index at or below the last one), and
// the tickets to a next hop must reach it in the order of their indexes. Each link therefore
// has its place in a line (turns): the costly public-key work of a packet (Peel's ECDH, the
// incoming ticket's signer recovery, the outgoing ticket's signature) runs in parallel, and only
// the bookkeeping that needs the order (accepting the incoming ticket; sending the frame with
// the outgoing one) waits for its turn. A turn waits only for the packets of its link that came
// before it and are already being worked on, so no link blocks another.

// laneStripes is how many lines the links share: links are striped by peer, and two links of
// one stripe share a line, which costs at most a wait behind each other's packets in progress.
const laneStripes = 64

// turns hands out places in one line (take) and lets their holders through in that order
// (wait, then done). Every place taken must be done exactly once, also when its packet is
// dropped, or the places after it wait forever.
type turns struct {
	mu   sync.Mutex
	cond sync.Cond // on mu
	next uint64    // the next place to hand out
	now  uint64    // the place whose turn it is
}

func (t *turns) init() { t.cond.L = &t.mu }

// wait returns when it is place n's turn.
func (t *turns) wait(n uint64) {
	t.mu.Lock()
	for t.now != n {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// done ends place n's turn, which must be the current one.
func (t *turns) done(n uint64) {
	t.mu.Lock()
	if t.now != n {
		t.mu.Unlock()
		panic("relay: a turn ended out of order")
	}
	t.now++
	t.mu.Unlock()
	t.cond.Broadcast()
}
