package cluster

import (
	"fmt"
	"math/big"
	"os"
	"time"

	"github.com/relayd/relayd/internal/config"
	"github.com/relayd/relayd/internal/networks"
	"github.com/relayd/relayd/internal/settings"
	"github.com/relayd/relayd/internal/token"
)

// Password is the keystore password of every identity a cluster creates. It
// is published here and in the README: a cluster's keys are for local testing
// only.
const Password = "relayd-cluster"

// Defaults of Config's fields; `relayd cluster` uses them as flag defaults.
const (
	DefaultNodes         = 5
	DefaultAPIPortBase   = 13301
	DefaultAdminPortBase = 19501
	DefaultP2PPortBase   = 19091
	DefaultChainPort     = 8545
	DefaultClosurePeriod = 60 * time.Second
	DefaultEnvFile       = "cluster.env"
	DefaultStageTimeout  = 90 * time.Second
	DefaultStopTimeout   = 15 * time.Second
	DefaultRestartDelay  = time.Second
	// MinNodes is the smallest cluster that can relay a paid message.
	MinNodes = 4
	// MaxNodes bounds the node count of a full mesh: n nodes need n×(n-1)
	// channels, two transactions each.
	MaxNodes = 20
	// MaxSparseNodes bounds the node count of a sparse network.
	MaxSparseNodes = 100
	// DefaultMaxChannels is how many channels each node of a sparse network
	// opens by its strategy.
	DefaultMaxChannels = 8
	// DefaultStrategyInterval is the channel strategy's tick in a sparse
	// network: short, so that the network forms in seconds.
	DefaultStrategyInterval = 2 * time.Second
	// MinEpochBlocks bounds Config.EpochBlocks below, DefaultEpochBlocks is its default.
	MinEpochBlocks     = 50
	DefaultEpochBlocks = 600
	// MaxBlockTime bounds the dev chain's block time: every stage waits for a few blocks, and a
	// longer block time makes them outlast the stage timeout.
	MaxBlockTime = 15 * time.Second
)

// Topologies.
const (
	// Mesh: the cluster opens a channel from every node to every other.
	Mesh = "mesh"
	// Sparse: the cluster opens nothing; every node runs the promiscuous
	// channel strategy and opens MaxChannels channels on its own.
	Sparse = "sparse"
)

var (
	// DefaultChannelFunding is what every channel of the mesh is funded
	// with: 100 tokens, enough for 10,000 relayer payments of 0.01.
	DefaultChannelFunding = token.Tokens(100).Big()
	// SpareTokens is what every node holds beyond its channels' funding, at
	// least (one channel's funding when that is more).
	SpareTokens = token.Tokens(100).Big()
	// NativeFunding is every node's native balance at genesis, for gas:
	// 100 coins pay for far more transactions than a local test sends.
	NativeFunding = token.Tokens(100).Big()
)

// Config configures Run. Executable is required; every other field has a
// working default in DefaultConfig, and Validate checks them.
type Config struct {
	// Executable is the relayd binary each node runs (normally os.Executable()).
	Executable string
	// Nodes is the number of nodes, at least 4: a paid message needs a
	// sender, 2 relayers and a recipient, all distinct.
	Nodes int
	// APIPortBase, AdminPortBase and P2PPortBase are the ports of node 1;
	// node N gets base+N-1. All listen on 127.0.0.1.
	APIPortBase, AdminPortBase, P2PPortBase int
	// ProfilePortBase, when not 0, makes node N serve Go's pprof profiles on
	// 127.0.0.1:ProfilePortBase+N-1 (relayd --profileAddress).
	ProfilePortBase int
	// SOCKS5PortBase, when not 0, makes node N serve a SOCKS5 entry on 127.0.0.1:base+N-1
	// (relayd --socks5Listen; with NetNS on its namespace's loopback) whose sessions go to the
	// node its alias "exit" names (--socks5Exit exit), set over its API or console.
	SOCKS5PortBase int
	// ChainPort is the dev chain's JSON-RPC port (HTTP and WebSocket).
	ChainPort int
	// ChainDrill puts a gate on ChainPort between the nodes and the dev chain that SIGUSR1 to
	// the cluster shuts and SIGUSR2 opens again: an outage drill for the providerDown alert.
	ChainDrill bool
	// APIToken is every node's REST and WebSocket token.
	APIToken string
	// DataDir holds node-N/ for every node (keystore, store, relayd.log).
	// Empty: a fresh temporary directory, removed when Run returns. A
	// directory the user names is kept.
	DataDir string
	// ClosurePeriod is the channels contract's closure period (whole seconds).
	ClosurePeriod time.Duration
	// BlockTime is the dev chain's block time (devchain.Config.BlockTime): 0 seals every
	// transaction at once; a positive one seals a block at that interval, as a real chain does.
	BlockTime time.Duration
	// MinWinProb is the network minimum win probability the dev chain's contract is deployed
	// with (devchain.Config.MinWinProb; 0: every ticket wins). The nodes follow it.
	MinWinProb uint64
	// MixDelayMean is every node's --mixDelayMean: the mean of the exponential per-hop mixing
	// delay (settings.Defaults().MixDelayMean); 0 with MixDelayMax 0 mixes nothing.
	MixDelayMean time.Duration
	// MixDelayMax is every node's --mixDelayMax, the cap of each per-hop delay; 0: 10 × the mean.
	MixDelayMax time.Duration
	// CoverRate is every node's --coverRate: loop cover packets per second (0: none).
	CoverRate float64
	// SendRate is every node's --sendRate: its constant-rate stream's packets per second (0: off).
	SendRate float64
	// AutoRedeem and AutoFund are every node's --autoRedeem and --autoFund: what it earns relaying
	// is redeemed and tops its channels up to ChannelFunding.
	AutoRedeem, AutoFund bool
	// Relayers is every node's --relayers: relayers of its own messages and cover loops
	// (0: settings.Defaults().Relayers).
	Relayers int
	// ChannelFunding is the balance every channel of the mesh is opened with
	// (smallest unit).
	ChannelFunding *big.Int
	// EnvFile is where cluster.env is written once every node is ready;
	// it is removed when the cluster stops.
	EnvFile string
	// StageTimeout bounds each waiting stage (nodes announced, channels
	// indexed); a stage that takes longer stops the cluster.
	StageTimeout time.Duration
	// StopTimeout is how long a node may take to exit after SIGTERM before
	// it is killed.
	StopTimeout time.Duration
	// NetNS runs every node in its own network namespace with its own
	// address on a bridge (internal/hostnet: node N at 10.77.0.(N+1), the
	// dev chain on the bridge at 10.77.0.1), so that nodes announce and dial
	// non-loopback addresses as on separate hosts. Root only. Each node's
	// REST, admin and p2p servers listen on its own address, on the same
	// ports as without NetNS; cluster.env carries those URLs, reachable from
	// the host through the bridge. The published default token is refused
	// off loopback, so a random one is made unless APIToken is set.
	NetNS bool
	// LinkRate, with NetNS, limits every node's link in each direction
	// (tc tbf rate, e.g. "10mbit").
	LinkRate string
	// Topology is Mesh (the default) or Sparse.
	Topology string
	// Layers, when not 0, makes the cluster's network layered (issue 30, docs/NETWORK.md "The
	// layered topology"): paths cross one relayer of each of Layers layers of at most
	// LayerWidth relayers, drawn again every EpochBlocks blocks. The cluster writes the network's
	// entry with its topology to <data>/networks.json and seals empty blocks up to the first
	// epoch with candidates (every node announces during epoch 0).
	Layers      int
	LayerWidth  int
	EpochBlocks uint64
	// RelayerCoverRate is the loops a second each relayer of the layers sends on top of its
	// coverRate (networks.Topology.RelayerCoverRate).
	RelayerCoverRate float64
	// RestartNodes restarts a node that exits once the cluster is ready, on
	// its data, after RestartDelay; without it the node stays down. Either
	// way the other nodes keep running.
	RestartNodes bool
	// RestartDelay is the wait before a restart (DefaultRestartDelay).
	RestartDelay time.Duration
	// Churn, when set, kills and restarts nodes while the cluster runs.
	Churn *Churn
	// MaxChannels is, with Sparse, each node's maxChannels setting
	// (DefaultMaxChannels); the cluster is ready once every node has opened
	// min(MaxChannels, Nodes-1) channels.
	MaxChannels int
}

// DefaultConfig returns the configuration `relayd cluster` starts with.
func DefaultConfig() Config {
	return Config{
		Nodes:            DefaultNodes,
		APIPortBase:      DefaultAPIPortBase,
		AdminPortBase:    DefaultAdminPortBase,
		P2PPortBase:      DefaultP2PPortBase,
		ChainPort:        DefaultChainPort,
		APIToken:         config.ClusterDefaultToken,
		ClosurePeriod:    DefaultClosurePeriod,
		MixDelayMean:     settings.Defaults().MixDelayMean,
		CoverRate:        settings.Defaults().CoverRate,
		SendRate:         settings.Defaults().SendRate,
		AutoRedeem:       settings.Defaults().AutoRedeem,
		AutoFund:         settings.Defaults().AutoFund,
		Relayers:         settings.Defaults().Relayers,
		ChannelFunding:   new(big.Int).Set(DefaultChannelFunding),
		EnvFile:          DefaultEnvFile,
		Topology:         Mesh,
		EpochBlocks:      DefaultEpochBlocks,
		RelayerCoverRate: networks.DefaultRelayerCoverRate,
		RestartDelay:     DefaultRestartDelay,
		MaxChannels:      DefaultMaxChannels,
		StageTimeout:     DefaultStageTimeout,
		StopTimeout:      DefaultStopTimeout,
	}
}

func (c Config) maxNodes() int {
	if c.Topology == Sparse {
		return MaxSparseNodes
	}
	return MaxNodes
}

// channelsPerNode is how many channels each node opens: every other node in
// a mesh, its strategy's share in a sparse network.
func (c Config) channelsPerNode() int {
	if c.Topology == Sparse {
		return min(c.MaxChannels, c.Nodes-1)
	}
	return c.Nodes - 1
}

// layeredShape describes a layered cluster's channels for its ready line; mesh is how a full
// mesh is described.
func (c Config) layeredShape(mesh string) string {
	layers := fmt.Sprintf("%d layers of up to %d relayers, drawn every %d blocks", c.Layers, c.LayerWidth, c.EpochBlocks)
	if c.Topology == Sparse {
		return "a layered network of " + layers + ", with the channels the nodes' strategies open into the first layer and from each layer into the next,"
	}
	return mesh + ", paths across " + layers + ","
}

// FieldError is a configuration problem about one flag of `relayd cluster`.
type FieldError struct {
	Flag string
	Msg  string
}

func (e *FieldError) Error() string { return "--" + e.Flag + " " + e.Msg }

// portRange is the ports one base flag reserves.
type portRange struct {
	flag  string
	what  string // what listens there, for messages
	first int
	count int
	udp   bool // also needs the UDP port (QUIC)
}

func (c Config) portRanges() []portRange {
	chain := portRange{flag: "chainPort", what: "the dev chain's JSON-RPC", first: c.ChainPort, count: 1}
	if c.NetNS {
		// Every node listens in its own namespace: only the chain shares the host's ports.
		return []portRange{chain}
	}
	ranges := []portRange{
		chain,
		{flag: "apiPortBase", what: "REST API", first: c.APIPortBase, count: c.Nodes},
		{flag: "adminPortBase", what: "admin WebSocket", first: c.AdminPortBase, count: c.Nodes},
		{flag: "p2pPortBase", what: "p2p (TCP and QUIC)", first: c.P2PPortBase, count: c.Nodes, udp: true},
	}
	if c.ProfilePortBase != 0 {
		ranges = append(ranges, portRange{flag: "profilePortBase", what: "pprof profiles", first: c.ProfilePortBase, count: c.Nodes})
	}
	if c.SOCKS5PortBase != 0 {
		ranges = append(ranges, portRange{flag: "socks5PortBase", what: "SOCKS5 entries", first: c.SOCKS5PortBase, count: c.Nodes})
	}
	return ranges
}

// Validate checks the configuration without touching the network or the
// file system and returns the first problem as a *FieldError.
func (c Config) Validate() error {
	switch {
	case c.Executable == "":
		return &FieldError{"executable", "is required: the relayd binary the nodes run"}
	case c.Topology != Mesh && c.Topology != Sparse:
		return &FieldError{"topology", "must be mesh or sparse"}
	case c.Nodes < MinNodes || c.Nodes > c.maxNodes():
		return &FieldError{"nodes", fmt.Sprintf("must be between %d and %d for a %s network (a paid message needs a sender, 2 relayers and a recipient)", MinNodes, c.maxNodes(), c.Topology)}
	case c.Topology == Sparse && (c.MaxChannels < 2 || c.MaxChannels > settings.MaxChannelsLimit):
		return &FieldError{"maxChannels", fmt.Sprintf("must be between 2 and %d", settings.MaxChannelsLimit)}
	case len(c.APIToken) < config.MinTokenLength:
		return &FieldError{"apiToken", fmt.Sprintf("must be at least %d characters long", config.MinTokenLength)}
	case c.ClosurePeriod <= 0 || c.ClosurePeriod%time.Second != 0:
		return &FieldError{"closurePeriod", "must be a positive whole number of seconds"}
	case c.BlockTime < 0 || c.BlockTime > MaxBlockTime:
		return &FieldError{"blockTime", fmt.Sprintf("must be between 0 (a block per transaction) and %v", MaxBlockTime)}
	case c.MixDelayMax < 0:
		return &FieldError{"mixDelayMax", "must not be negative"}
	case c.MixDelayMean < 0 || c.MixDelayMean > settings.MaxMixDelayMean:
		return &FieldError{"mixDelayMean", fmt.Sprintf("must be between 0 and %v", settings.MaxMixDelayMean)}
	case c.MixDelayMean > 0 && c.MixDelayMax != 0 && c.MixDelayMax < c.MixDelayMean:
		return &FieldError{"mixDelayMax", "must be at least --mixDelayMean (it caps each exponential draw; 0: 10 × the mean)"}
	case !(c.SendRate >= 0 && c.SendRate <= settings.MaxSendRate):
		return &FieldError{"sendRate", fmt.Sprintf("must be between 0 and %d packets per second", settings.MaxSendRate)}
	case !(c.CoverRate >= 0 && c.CoverRate <= settings.MaxCoverRate):
		return &FieldError{"coverRate", fmt.Sprintf("must be between 0 and %d packets per second", settings.MaxCoverRate)}
	case c.Relayers != 0 && (c.Relayers < settings.MinRelayers || c.Relayers > settings.MaxRelayers):
		return &FieldError{"relayers", fmt.Sprintf("must be %d or %d", settings.MinRelayers, settings.MaxRelayers)}
	case c.ChannelFunding == nil || c.ChannelFunding.Sign() <= 0:
		return &FieldError{"channelFunding", "must be a positive amount"}
	case c.EnvFile == "":
		return &FieldError{"env", "must name a file"}
	case c.StageTimeout <= 0:
		return &FieldError{"stageTimeout", "must be positive"}
	case c.StopTimeout <= 0:
		return &FieldError{"stopTimeout", "must be positive"}
	case c.RestartDelay < 0:
		return &FieldError{"restartDelay", "must not be negative"}
	case c.Churn != nil && (c.Churn.Fraction <= 0 || c.Churn.Fraction > 1):
		return &FieldError{"churn", "must be a share of the nodes above 0 and at most 1 (0.1 = 10 %)"}
	case c.Churn != nil && (c.Churn.Interval <= 0 || c.Churn.Downtime < 0):
		return &FieldError{"churnInterval", "must be positive, and --churnDowntime not negative"}
	case c.Churn != nil && len(c.Churn.Exclude) >= c.Nodes:
		return &FieldError{"churnExclude", "leaves no node to kill"}
	case c.Layers != 0 && (c.Layers < networks.MinLayers || c.Layers > networks.MaxLayers):
		return &FieldError{"layers", fmt.Sprintf("must be 0 (free routes), %d or %d", networks.MinLayers, networks.MaxLayers)}
	case c.Layers != 0 && (c.LayerWidth < 1 || c.Layers*c.LayerWidth >= c.Nodes):
		return &FieldError{"layerWidth", fmt.Sprintf("must be at least 1, and --layers × --layerWidth less than --nodes (%d): a message needs a sender outside the layers or a relayer of another layer", c.Nodes)}
	case !(c.RelayerCoverRate >= 0 && c.RelayerCoverRate <= networks.MaxRelayerCoverRate): // also NaN
		return &FieldError{"relayerCoverRate", fmt.Sprintf("must be 0 to %d loops a second", networks.MaxRelayerCoverRate)}
	case c.Layers != 0 && c.EpochBlocks < MinEpochBlocks:
		return &FieldError{"epochBlocks", fmt.Sprintf("must be at least %d: the cluster announces its nodes and opens their channels within the first epoch", MinEpochBlocks)}
	case c.LinkRate != "" && !c.NetNS:
		return &FieldError{"linkRate", "needs --netns (it shapes the nodes' links to the bridge)"}
	case c.NetNS && c.ProfilePortBase != 0:
		return &FieldError{"profilePortBase", "serves profiles on each node's loopback, which --netns puts out of reach"}
	case c.NetNS && os.Geteuid() != 0:
		return &FieldError{"netns", "needs root: it creates network namespaces, a bridge and veth pairs"}
	}
	ranges := c.portRanges()
	for _, r := range ranges {
		if r.first < 1 || r.first+r.count-1 > 65535 {
			return &FieldError{r.flag, fmt.Sprintf("must leave room for %d port(s) between 1 and 65535", r.count)}
		}
	}
	for i, a := range ranges {
		for _, b := range ranges[i+1:] {
			if a.first < b.first+b.count && b.first < a.first+a.count {
				return &FieldError{b.flag, fmt.Sprintf("ports %d-%d overlap --%s's %d-%d", b.first, b.first+b.count-1, a.flag, a.first, a.first+a.count-1)}
			}
		}
	}
	return nil
}
