package tickets

import (
	"fmt"
	"io"

	"github.com/holiman/uint256"
)

// PadMax is the most units of PricePerRelayer a sender adds to a message's first ticket: it
// draws the padding uniformly from 0..PadMax for every message (DrawPad), every relayer still
// issues its next hop its incoming amount less PricePerRelayer, and the padding reaches the
// recipient as the last relayer's ticket. A relayer so cannot read its position on the path from
// the amount, except at the two ends of the range (docs/PROTOCOL.md §4.5, "What a relayer learns
// from an amount", which derives the value). It is a protocol constant: a sender that draws from
// another range stands out to its relayers.
const PadMax = 7

// DrawPad draws from single bytes.
var _ [255 - PadMax]struct{}

// PaddedAmount returns AmountFor(relayersAhead + pad), the value of a ticket whose issuer still
// has relayersAhead relayers ahead of it on a message whose sender drew pad (0..PadMax): for a
// message over 2 relayers with pad 3 the sender issues 0.05, the first relayer 0.04 and the last
// relayer 0.03, which the recipient keeps. Negative arguments are programming errors and panic.
func PaddedAmount(relayersAhead, pad int) uint256.Int {
	if pad < 0 {
		panic(fmt.Sprintf("tickets: PaddedAmount(%d, %d): negative padding", relayersAhead, pad))
	}
	return AmountFor(relayersAhead + pad)
}

// DrawPad draws a message's padding uniformly from 0..PadMax with randomness from r, which
// must be a cryptographic source (crypto/rand.Reader in production): a predictable draw tells a
// relayer its position as surely as no padding. It reads whole bytes and rejects the few that
// would bias the draw, so it fails only when r does.
func DrawPad(r io.Reader) (int, error) {
	const n = PadMax + 1
	const limit = 256 - 256%n // bytes below limit map uniformly onto 0..PadMax
	var b [1]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, fmt.Errorf("draw ticket padding: %w", err)
		}
		if int(b[0]) < limit {
			return int(b[0]) % n, nil
		}
	}
}
