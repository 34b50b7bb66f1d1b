// Package bench is the load generator behind `relayctl bench`: it drives a
// running relayd network through its public interfaces only (REST
// POST /api/v2/messages on the senders, the recipients' admin WebSockets, and
// GET /api/v2/node/metrics on every node) and measures what a user of the
// network sees: how many messages the API accepted and rejected, how many
// arrived, how long each took, how fast the network went and what it cost
// every node in CPU and memory.
//
// Every message text carries the run's random id and a sequence number
// ("bench:<run>:<seq>:" padded to the requested size), so a delivery is
// matched to its send exactly, whatever the order of arrival, and frames the
// admin server replays from before the run (or from other runs) are ignored.
// With several recipients each one's admin WebSocket is watched, and a
// message of the run that arrives at a recipient it was not addressed to is
// counted as misrouted (a bug of the network), not as delivered.
//
// Messages go round robin over every (sender, recipient) pair at a fixed rate, or, with
// Config.Patient, come from patient senders: each writes to one fixed correspondent in on/off
// bursts, the workload of a statistical disclosure attack (issue 26); GroundTruth is what such
// an attack is scored against.
//
// Everything is bounded: the send rate (Limiter), the requests in flight
// (Config.Concurrency), the time spent sending (Config.MaxDuration) and the
// time spent waiting for stragglers (Config.Timeout). The clock is injected
// (Clock) so the rate limiter can be tested without sleeping.
//
// Each node's CPU is divided by the packets its relay counters say it handled in its role and
// compared with the floor, the unavoidable public-key work of such a packet, which the tool
// times in its own process right before and right after the load (Floor, Cost): the machine's
// speed moves from minute to minute, a ratio measured within one run much less.
//
// The package talks to nodes over HTTP and WebSocket only; of relayd's packages it imports
// internal/ws and internal/console (frames), internal/observe (the observer's truth file) and
// internal/por (the floor's base-point multiplications), never the node's internals.
package bench
