package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/relayd/relayd/internal/devchain"
	"github.com/relayd/relayd/internal/networks"
)

// A layered cluster (Config.Layers): its nodes join the network "local" from a networks file
// the cluster writes, the dev chain's deployment with the topology, so that they draw the same
// layers (docs/NETWORK.md "The layered topology"). Every node announces itself during epoch 0,
// whose draw has no candidate: the cluster seals empty blocks up to epoch 1 once they have.

// networksFile is where a layered cluster writes its network's entry.
func (c *cluster) networksFile() string { return filepath.Join(c.dataDir, "networks.json") }

// writeNetworks writes the layered network's entry: the shipped "local" network as this dev
// chain serves it (its provider, contracts and their parameters), with the topology.
func (c *cluster) writeNetworks(ctx context.Context) error {
	nw, err := networks.Lookup("local", "")
	if err != nil {
		return fmt.Errorf("layered network: %w", err)
	}
	params, err := c.chain.Params(ctx)
	if err != nil {
		return fmt.Errorf("layered network: read the channels contract: %w", err)
	}
	d := c.chain.Deployment()
	nw.Description = fmt.Sprintf("relayd cluster: %d layers of at most %d relayers, drawn every %d blocks", c.cfg.Layers, c.cfg.LayerWidth, c.cfg.EpochBlocks)
	nw.ChainID, nw.Provider, nw.Token, nw.Channels, nw.StartBlock = devchain.ChainID, c.rpcURL(), d.Token, d.Channels, 0
	nw.MinWinProb, nw.ClosurePeriod = params.MinWinProb, params.ClosurePeriod
	nw.Topology = &networks.Topology{Layers: c.cfg.Layers, Width: c.cfg.LayerWidth, EpochBlocks: c.cfg.EpochBlocks, RelayerCoverRate: c.cfg.RelayerCoverRate}
	if err := networks.Append(c.networksFile(), nw); err != nil {
		return fmt.Errorf("layered network: %w", err)
	}
	return nil
}

// reachFirstDraw seals empty blocks until the chain's head is in epoch 1, the first whose
// candidates are the announced nodes.
func (c *cluster) reachFirstDraw(ctx context.Context) error {
	t0 := time.Now()
	for {
		head, err := c.chain.Head(ctx)
		if err != nil {
			return fmt.Errorf("layers: read the head: %w", err)
		}
		if head >= c.cfg.EpochBlocks {
			c.progress("layers: sealed blocks up to %d, epoch 1, whose draw has every announced node as candidate (%s)", head, since(t0))
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		c.chain.Seal()
	}
}
