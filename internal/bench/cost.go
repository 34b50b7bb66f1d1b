package bench

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// DefaultRelayers is the number of relayers per message assumed for the sender's floor when the
// nodes' counters cannot tell it (a 4-node local network routes over 2).
const DefaultRelayers = 2

// Cost is what each role of the network spent in CPU per packet during a run, as a ratio to the
// unavoidable public-key work of that packet timed by the tool in the same run (Floor): the
// VM's speed changes between runs, the ratio much less.
type Cost struct {
	Before Floor `json:"floorBefore"` // timed right before the load
	After  Floor `json:"floorAfter"`  // timed right after it
	Floor  Floor `json:"floor"`       // their mean: what the ratios divide by
	// Drift is After's hop floor over Before's: how much the machine's speed moved during the
	// run (1 = not at all).
	Drift float64 `json:"drift"`
	// Relayers is the mean number of relayers per message used for the sender's floor, from
	// the nodes' counters (relayers' forwarded packets over the senders' sent ones) unless it
	// was given (RelayersSource "given") or could not be read ("default").
	Relayers       float64    `json:"relayers"`
	RelayersSource string     `json:"relayersSource"`
	Roles          []RoleCost `json:"roles"`
	// Network is all nodes' CPU per delivered message against the whole message's floor (the
	// sender's creation, each relayer's hop, the recipient's delivery).
	Network RoleCost `json:"network"`
}

// RoleCost is one role's CPU, summed over the nodes of that role.
type RoleCost struct {
	Role       string  `json:"role"` // sender, relayer, recipient, or network for every node
	Nodes      []int   `json:"nodes"`
	CPUSeconds float64 `json:"cpuSeconds"`
	// Packets is what the role's relay counters say it handled: messages sent (cover loops
	// included), packets forwarded, packets delivered; -1 when a node's metrics lack them.
	Packets float64 `json:"packets"`
	// PerPacketUs is CPUSeconds over Packets, 0 when Packets is unknown or zero.
	PerPacketUs float64 `json:"perPacketUs"`
	// PerMessageUs is CPUSeconds over the run's delivered messages.
	PerMessageUs float64 `json:"perMessageUs"`
	FloorUs      float64 `json:"floorUs"` // the floor of one packet of this role
	// Ratio is PerPacketUs over FloorUs (for the network, PerMessageUs over the message's
	// floor); 0 when unknown.
	Ratio float64 `json:"ratio"`
}

// Costs divides each role's CPU by the packets it handled and by the floor. relayers > 0 fixes
// the relayers per message for the sender's floor; 0 infers it from the counters.
func Costs(nodes []NodeUsage, delivered int, before, after Floor, relayers float64) Cost {
	c := Cost{Before: before, After: after, Floor: MeanFloor(before, after)}
	if b := before.HopNs(); b > 0 {
		c.Drift = after.HopNs() / b
	}
	roles := map[string]*RoleCost{}
	order := []string{"sender", "relayer", "recipient"}
	for _, r := range order {
		roles[r] = &RoleCost{Role: r}
	}
	net := RoleCost{Role: "network"}
	for _, n := range nodes {
		rc, ok := roles[n.Role]
		if !ok {
			continue
		}
		rc.Nodes = append(rc.Nodes, n.Node)
		rc.CPUSeconds += n.CPUSeconds
		net.Nodes = append(net.Nodes, n.Node)
		net.CPUSeconds += n.CPUSeconds
		var p float64
		switch n.Role {
		case "sender":
			p = n.PacketsSent
		case "relayer":
			p = n.PacketsForwarded
		default:
			p = n.PacketsDelivered
		}
		if p < 0 || rc.Packets < 0 {
			rc.Packets = -1
		} else {
			rc.Packets += p
		}
	}

	switch {
	case relayers > 0:
		c.Relayers, c.RelayersSource = relayers, "given"
	case roles["sender"].Packets > 0 && roles["relayer"].Packets >= 0:
		c.Relayers, c.RelayersSource = roles["relayer"].Packets/roles["sender"].Packets, "counters"
	default:
		c.Relayers, c.RelayersSource = DefaultRelayers, "default"
	}

	f := c.Floor
	floors := map[string]float64{"sender": f.CreateNs(c.Relayers), "relayer": f.HopNs(), "recipient": f.RecipientNs()}
	for _, r := range order {
		rc := roles[r]
		if len(rc.Nodes) == 0 {
			continue
		}
		rc.FloorUs = floors[r] / 1e3
		if rc.Packets > 0 {
			rc.PerPacketUs = rc.CPUSeconds * 1e6 / rc.Packets
			if rc.FloorUs > 0 {
				rc.Ratio = rc.PerPacketUs / rc.FloorUs
			}
		}
		if delivered > 0 {
			rc.PerMessageUs = rc.CPUSeconds * 1e6 / float64(delivered)
		}
		c.Roles = append(c.Roles, *rc)
	}
	net.Packets = float64(delivered)
	net.FloorUs = (f.CreateNs(c.Relayers) + c.Relayers*f.HopNs() + f.RecipientNs()) / 1e3
	if delivered > 0 {
		net.PerMessageUs = net.CPUSeconds * 1e6 / float64(delivered)
		net.PerPacketUs = net.PerMessageUs
		if net.FloorUs > 0 {
			net.Ratio = net.PerMessageUs / net.FloorUs
		}
	}
	c.Network = net
	return c
}

// String is the cost table of the text report.
func (c *Cost) String() string {
	s := fmt.Sprintf("floor (µs, timed by this tool before / after the load): ECDH %.1f / %.1f, ecrecover %.1f / %.1f, sign %.1f / %.1f, k·G %.1f / %.1f; drift %.2f\n",
		c.Before.ECDHNs/1e3, c.After.ECDHNs/1e3, c.Before.RecoverNs/1e3, c.After.RecoverNs/1e3,
		c.Before.SignNs/1e3, c.After.SignNs/1e3, c.Before.BaseMultNs/1e3, c.After.BaseMultNs/1e3, c.Drift)
	s += fmt.Sprintf("relayers per message %.2f (%s)\n", c.Relayers, c.RelayersSource)
	return s
}

// writeTable writes the cost section of the text report.
func (c *Cost) writeTable(b *strings.Builder) {
	b.WriteString("\nCPU per packet against the floor (the unavoidable public-key work, timed by this tool in the same run)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "role\tnodes\tCPU s\tpackets\tµs/packet\tµs/message\tfloor µs\t× floor\t")
	for _, r := range append(c.Roles, c.Network) {
		packets, perPacket, ratio := "?", "?", "?"
		if r.Packets >= 0 {
			packets = fmt.Sprintf("%.0f", r.Packets)
		}
		if r.PerPacketUs > 0 {
			perPacket = fmt.Sprintf("%.1f", r.PerPacketUs)
		}
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2f", r.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%.1f\t%.1f\t%s\t\n", r.Role, joinInts(r.Nodes), r.CPUSeconds, packets, perPacket, r.PerMessageUs, r.FloorUs, ratio)
	}
	tw.Flush()
	b.WriteString(c.String())
}
