package packet

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	sphinx "github.com/lightningnetwork/lightning-onion"
)

// acceptAll is a lightning-onion ReplayLog that stores nothing, so the
// benchmark measures packet processing as BenchmarkPeel does with fresh{}.
type acceptAll struct{}

func (acceptAll) Start() error                           { return nil }
func (acceptAll) Stop() error                            { return nil }
func (acceptAll) Get(*sphinx.HashPrefix) (uint32, error) { return 0, sphinx.ErrLogEntryNotFound }
func (acceptAll) Put(*sphinx.HashPrefix, uint32) error   { return nil }
func (acceptAll) Delete(*sphinx.HashPrefix) error        { return nil }
func (acceptAll) PutBatch(*sphinx.Batch) (*sphinx.ReplaySet, error) {
	return sphinx.NewReplaySet(), nil
}

// BenchmarkLightningOnionProcess is the peer reference: lightning-onion's
// ProcessOnionPacket at the first hop of a 4-hop onion (BOLT 4: ECDH plus
// ephemeral-key blinding, HMAC-SHA256 and ChaCha20 over 1,300 bytes of
// routing data), on the same machine and in the same run as BenchmarkPeel.
func BenchmarkLightningOnionProcess(b *testing.B) {
	var route sphinx.PaymentPath
	var first *sphinx.Router
	for i := range 4 {
		k, err := btcec.NewPrivateKey()
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			first = sphinx.NewRouter(&sphinx.PrivKeyECDH{PrivKey: k}, acceptAll{})
		}
		payload, err := sphinx.NewTLVHopPayload(bytes.Repeat([]byte{byte(i)}, 100))
		if err != nil {
			b.Fatal(err)
		}
		route[i] = sphinx.OnionHop{NodePub: *k.PubKey(), HopPayload: payload}
	}
	session, err := btcec.NewPrivateKey()
	if err != nil {
		b.Fatal(err)
	}
	onion, err := sphinx.NewOnionPacket(&route, session, nil, sphinx.DeterministicPacketFiller)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := first.ProcessOnionPacket(onion, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
}
