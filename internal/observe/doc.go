// Package observe is the global passive observer of issue 14: what an adversary who watches
// every link of the network learns about who talks to whom, scored against the ground truth of
// the traffic.
//
// Its input is what such an observer sees and nothing more: for each transmission on each link,
// the time, the two hosts and the number of bytes (Transmission). internal/capture records them
// from the wire (AF_PACKET on the bridge ports of a namespace network, or loopback by the
// connections' port pairs); internal/sim produces them from a simulated network. The ground
// truth (Message: who sent which message to whom, when it was sent and delivered) comes from
// `relayctl bench` or the simulation and is used only to pick each message's delivery on the
// wire and to score the attacks, never by the attacks themselves.
//
// Attacks (Analyze):
//   - timing: for each message delivered, the observer follows the packet that reached the
//     recipient backwards, hop by hop, weighting every earlier packet into the hop's host by the
//     likelihood of the delay between them under the network's public mixing-delay distribution
//     (Delay), and so arrives at a probability distribution over the senders;
//   - size: the same, but a packet's predecessors must have its size class, and the sizes of
//     the transmissions are tallied by kind (a leak shows as more than one message size).
//
// Each yields per message the Shannon entropy of the observer's distribution over the senders
// (the maximum is log2 of their number) and whether its most likely sender is the true one
// (top-1), against the rate of a random guess.
//
// A patient observer (issue 26; LongTerm, which Analyze runs too) follows no packet: it counts
// the message packets into and out of every host per window, and from those counts alone runs
// a statistical disclosure attack that ranks each sender's correspondents and each recipient's
// senders (classic counts, and out − in residuals, in which relayed packets and loops cancel),
// scored after 25, 50, 100 and 200 messages per target against a random 1/(N−1), and an
// activity detection per 5 s window, calibrated on the first half of the traffic and scored
// (balanced accuracy, chance 50 %) on the second.
//
// The package is pure: it imports only the standard library.
package observe
