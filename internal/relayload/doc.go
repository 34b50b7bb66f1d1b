// Package relayload is the load generator behind `relayctl load`: it pushes pre-built, valid,
// paid onion packets into ONE relayer of a running network (`relayd cluster`) from a client
// that spends almost no CPU per packet, so that the relayer, a real relayd process, is the
// bottleneck, and it measures what the relayer did with them from its metrics.
//
// A run: a fresh identity G is funded on the dev chain with the deployer's published key and
// opens a channel to the relayer big enough for every packet; once the relayer's REST API shows
// the channel open, G builds every packet with the node's own code (a relay.Relay whose
// transport only records frames, paying with a ledger.Ledger over a temporary store): real
// Sphinx packets over [relayer, recipient], each with a signed ticket of the next index. Then a
// p2p.Host as G connects to the relayer and pushes the frames on the msg protocol at the
// requested rate, counting the relayer's acknowledgements; the relayer's and the recipient's
// metrics (GET /api/v2/node/metrics) are sampled during and after the push (Snapshot, Compute).
//
// It is a test tool, not part of a node: it may import internal/relay, internal/ledger,
// internal/p2p, internal/packet, internal/por, internal/tickets, internal/identity,
// internal/chain, internal/channels, internal/store, internal/token, internal/devfund (for the deployer's key
// and FundAccount) and internal/bench (the env file and the rate limiter). Nothing but
// cmd/relayctl imports it. It never logs keys, tickets or message texts.
package relayload
